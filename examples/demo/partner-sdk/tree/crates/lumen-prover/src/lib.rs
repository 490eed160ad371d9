//! Batch proving client for Midnight proof servers.
//!
//! `lumen-prover` collects unproven transactions, sends them to a proof server in batches and
//! returns the proven transactions in the order they were submitted. It is used by Lumen Labs'
//! indexer-side relayers, which prove many small transactions for their users.

use midnight_ledger::UnprovenTransaction;
use midnight_zswap::ProvingParams;
use serde::{Deserialize, Serialize};

/// Settings of a [`Prover`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProverConfig {
    /// Address of the proof server, for example `http://localhost:6300`.
    pub server_url: String,
    /// Largest number of transactions sent in one batch.
    pub max_batch: usize,
}

/// Errors returned while proving.
#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    /// The proof server could not be reached or answered with an error status.
    #[error("proof server error: {0}")]
    Server(String),
    /// A transaction could not be serialized for the proof server.
    #[error("cannot serialize transaction: {0}")]
    Encode(String),
}

/// A client that proves transactions in batches.
pub struct Prover {
    config: ProverConfig,
    params: ProvingParams,
}

impl Prover {
    /// Creates a prover with the Zswap proving parameters of the given network.
    pub fn new(config: ProverConfig, network: &str) -> Self {
        Prover { config, params: ProvingParams::for_network(network) }
    }

    /// Proves one transaction with the legacy single-request protocol.
    #[deprecated(since = "0.3.0", note = "use prove_v2")]
    pub fn prove(&self, tx: &UnprovenTransaction) -> Result<Vec<u8>, ProveError> {
        self.prove_v2(std::slice::from_ref(tx)).map(|mut v| v.remove(0))
    }

    /// Proves a batch of transactions and returns the proven bytes in submission order.
    ///
    /// Batches longer than `max_batch` are split; a failure in one batch fails the whole call,
    /// because relayers must not submit a partial sequence of dependent transactions.
    pub fn prove_v2(&self, txs: &[UnprovenTransaction]) -> Result<Vec<Vec<u8>>, ProveError> {
        let mut out = Vec::with_capacity(txs.len());
        for batch in txs.chunks(self.config.max_batch.max(1)) {
            let body = encode_batch(batch, &self.params)?;
            out.extend(post_batch(&self.config.server_url, &body)?);
        }
        Ok(out)
    }
}

fn encode_batch(batch: &[UnprovenTransaction], params: &ProvingParams) -> Result<Vec<u8>, ProveError> {
    midnight_ledger::serialize_batch(batch, params).map_err(|e| ProveError::Encode(e.to_string()))
}

fn post_batch(url: &str, body: &[u8]) -> Result<Vec<Vec<u8>>, ProveError> {
    midnight_ledger::http::post_prove_batch(url, body).map_err(|e| ProveError::Server(e.to_string()))
}
