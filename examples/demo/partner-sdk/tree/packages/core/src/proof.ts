/** A request for one zero-knowledge proof. */
export interface ProofRequest {
  /** Name of the exported circuit being proven. */
  circuit: string;
  /** Serialized unproven transaction. */
  payload: Uint8Array;
}

/**
 * A client for a local Midnight proof server that sends one proving request at a time.
 *
 * Proof servers prove requests in parallel and run out of memory when a page fires many at once. The
 * client queues requests in order and reports the queue length so that a UI can show progress.
 */
export class ProofServerClient {
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /** @param baseUrl - proof server address, by default `http://localhost:6300` */
  constructor(private readonly baseUrl = 'http://localhost:6300') {}

  /** Number of proving requests waiting or running. */
  get queueLength(): number {
    return this.pending;
  }

  /**
   * Proves a transaction and resolves with the proven bytes.
   *
   * @throws Error when the proof server answers with a non-2xx status
   */
  proveTransaction(request: ProofRequest): Promise<Uint8Array> {
    this.pending++;
    const run = this.queue.then(async () => {
      try {
        const res = await fetch(`${this.baseUrl}/prove-tx`, { method: 'POST', body: request.payload });
        if (!res.ok) throw new Error(`proof server answered ${res.status} for ${request.circuit}`);
        return new Uint8Array(await res.arrayBuffer());
      } finally {
        this.pending--;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves true when the proof server's health endpoint answers. */
  async isHealthy(): Promise<boolean> {
    try {
      return (await fetch(`${this.baseUrl}/health`)).ok;
    } catch {
      return false;
    }
  }
}
