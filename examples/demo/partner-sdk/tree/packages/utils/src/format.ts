/** Number of atomic units in one DUST. */
export const DUST_DECIMALS = 6;

/**
 * Formats an amount of DUST atomic units for display, for example `1500000n` as `"1.5 DUST"`.
 *
 * @param atomic - the amount in atomic units
 * @param symbol - the unit shown after the number; `tDUST` on testnet
 */
export function formatDust(atomic: bigint, symbol = 'DUST'): string {
  const base = 10n ** BigInt(DUST_DECIMALS);
  const whole = atomic / base;
  const frac = (atomic % base).toString().padStart(DUST_DECIMALS, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac} ${symbol}` : `${whole} ${symbol}`;
}

/**
 * Splits a bech32m Midnight address into its human-readable prefix and data part.
 *
 * @throws Error when the address has no separator or an unknown prefix
 */
export function parseAddress(address: string): { prefix: string; data: string } {
  const i = address.lastIndexOf('1');
  if (i < 1) throw new Error(`not a bech32m address: ${address}`);
  const prefix = address.slice(0, i);
  if (!prefix.startsWith('mn_')) throw new Error(`not a Midnight address prefix: ${prefix}`);
  return { prefix, data: address.slice(i + 1) };
}
