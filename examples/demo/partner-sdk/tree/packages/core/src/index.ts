/**
 * Public entry point of the Lumen SDK core package.
 *
 * @packageDocumentation
 */
export { connectWallet, connect, type WalletSession, type ConnectOptions } from './wallet.js';
export { ContractClient, type DeployedContractInfo } from './contract.js';
export { ProofServerClient, type ProofRequest } from './proof.js';
