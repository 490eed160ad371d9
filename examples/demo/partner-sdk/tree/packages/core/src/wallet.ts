import { firstValueFrom, timer } from 'rxjs';

/** Options accepted by {@link connectWallet}. */
export interface ConnectOptions {
  /** Identifier under `window.midnight`, for example `mnLace`. */
  walletId?: string;
  /** How many times to reopen the authorization dialog when the wallet is locked. */
  retries?: number;
  /** Milliseconds to wait between two authorization attempts. */
  retryDelayMs?: number;
}

/**
 * An authorized connection to a browser wallet.
 *
 * A session keeps the service addresses the user configured in the wallet, so that the DApp sends
 * indexer queries and proving requests to the same services as the wallet.
 */
export interface WalletSession {
  /** The shielded address of the connected account. */
  readonly address: string;
  /** Indexer GraphQL endpoint taken from the wallet's configuration. */
  readonly indexerUri: string;
  /** Proof server endpoint taken from the wallet's configuration. */
  readonly proverUri: string;
  /** Balances, proves and submits a transaction through the wallet; resolves with its id. */
  submit(tx: unknown): Promise<string>;
}

/**
 * Connects to a browser wallet through the DApp connector and returns an authorized session.
 *
 * The wallet shows its consent dialog on the first call. When the wallet is locked the call waits
 * `retryDelayMs` and tries again, up to `retries` times, before it rejects with the wallet's error.
 *
 * @param options - wallet identifier and retry behaviour; defaults to Lace with three retries
 * @returns a session bound to the connected account
 */
export async function connectWallet(options: ConnectOptions = {}): Promise<WalletSession> {
  const { walletId = 'mnLace', retries = 3, retryDelayMs = 1500 } = options;
  const injected = (globalThis as any).midnight?.[walletId];
  if (!injected) throw new Error(`wallet ${walletId} is not installed`);
  for (let attempt = 0; ; attempt++) {
    try {
      const api = await injected.enable();
      const state = await api.state();
      const uris = await api.serviceUriConfig();
      return {
        address: state.address,
        indexerUri: uris.indexerUri,
        proverUri: uris.proverServerUri,
        submit: async (tx) => api.submitTransaction(await api.balanceAndProveTransaction(tx, [])),
      };
    } catch (err) {
      if (attempt >= retries) throw err;
      await firstValueFrom(timer(retryDelayMs));
    }
  }
}

/**
 * Connects to the Lace wallet without retries.
 *
 * @deprecated Use connectWallet instead.
 */
export async function connect(): Promise<WalletSession> {
  return connectWallet({ retries: 0 });
}
