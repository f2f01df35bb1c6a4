// What a client of the database feels of an in-place restore: an app's session (TLS, the
// database's own user) that tries an INSERT every 100 ms, and reconnects after any error.
// The live server is held read-only while the restored data is built, so reads go on and
// writes stop until the restored server is promoted; its restarts (on hold, the swap)
// drop every session for a moment. The probe answers the longest stretch between the
// last write that committed before a failure and the next one that did, and the same for
// reads.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';

const INTERVAL_MS = 100;
// A try that hangs (a server stopping under it) counts as a failure after this long.
const TRY_TIMEOUT_MS = 2000;
// SQLSTATE of a write refused by a read-only server: the session itself still reads.
const READ_ONLY = '25006';
const TABLE = 'write_probe';

/** The longest stretches a client went without a write and without a read, in seconds. */
export interface Unavailable {
  writeSeconds: number;
  readSeconds: number;
  /** Tries that failed, of either kind. */
  failedTries: number;
}

/** Times between successes, and the longest gap that had a failure in it. */
class Stretch {
  private last: number | undefined;
  private failedSinceLast = false;
  longest = 0;

  succeeded(at: number): void {
    if (this.failedSinceLast && this.last !== undefined)
      this.longest = Math.max(this.longest, at - this.last);
    this.last = at;
    this.failedSinceLast = false;
  }

  failed(): void {
    this.failedSinceLast = true;
  }

  /** Whether a try succeeded after `at` (and no failure came after it). */
  succeededSince(at: number): boolean {
    return this.last !== undefined && this.last > at && !this.failedSinceLast;
  }
}

/**
 * Makes the probe's small table. It must be in the backups that are restored in place:
 * made after them, it would be gone with the restore, and every write after it would fail.
 */
export async function createProbeTable(connectionString: string, caPem: string): Promise<void> {
  const client = new pg.Client(clientConfig(connectionString, caPem));
  await client.connect();
  try {
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    );
  } finally {
    await client.end();
  }
}

function clientConfig(connectionString: string, caPem: string): pg.ClientConfig {
  const url = new URL(connectionString);
  url.searchParams.delete('sslmode');
  return {
    connectionString: url.toString(),
    ssl: { ca: caPem },
    connectionTimeoutMillis: TRY_TIMEOUT_MS,
    query_timeout: TRY_TIMEOUT_MS,
  };
}

export class WriteProbe {
  private readonly writes = new Stretch();
  private readonly reads = new Stretch();
  private failedTries = 0;
  private client: pg.Client | undefined;
  private running = true;
  private readonly loop: Promise<void>;

  private constructor(private readonly config: pg.ClientConfig) {
    this.loop = this.run();
  }

  /** Starts writing; answers once a first write has committed. */
  static async start(connectionString: string, caPem: string): Promise<WriteProbe> {
    const probe = new WriteProbe(clientConfig(connectionString, caPem));
    const since = performance.now();
    await probe.until(() => probe.writes.succeededSince(since), 30_000, 'a first write');
    return probe;
  }

  /**
   * Goes on until a write commits after this call (the restore is over: the server takes
   * writes again), at most `timeoutMs`, then stops and answers the longest stretches.
   */
  async stop(timeoutMs = 60_000): Promise<Unavailable> {
    const since = performance.now();
    try {
      await this.until(() => this.writes.succeededSince(since), timeoutMs, 'writes again');
    } finally {
      this.running = false;
      await this.loop;
      this.drop();
    }
    return {
      writeSeconds: this.writes.longest / 1000,
      readSeconds: this.reads.longest / 1000,
      failedTries: this.failedTries,
    };
  }

  private async until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!done()) {
      if (performance.now() > deadline)
        throw new Error(`the write probe saw no ${what} within ${timeoutMs / 1000} s`);
      await delay(INTERVAL_MS / 2);
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      const started = performance.now();
      await this.tryOnce();
      await delay(Math.max(0, INTERVAL_MS - (performance.now() - started)));
    }
  }

  /** One INSERT; refused as read-only, one read on the same session instead. */
  private async tryOnce(): Promise<void> {
    try {
      const client = this.client ?? (await this.connect());
      try {
        await client.query(`INSERT INTO ${TABLE} DEFAULT VALUES`);
        const at = performance.now();
        this.writes.succeeded(at);
        this.reads.succeeded(at);
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== READ_ONLY) throw err;
        this.writes.failed();
        this.failedTries += 1;
      }
      await client.query(`SELECT count(*) FROM ${TABLE}`);
      this.reads.succeeded(performance.now());
    } catch {
      // The session is gone (the server restarted or stopped): a new one at the next try.
      this.writes.failed();
      this.reads.failed();
      this.failedTries += 1;
      this.drop();
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client(this.config);
    // A session the server ends between two tries reports it here; the next try reconnects.
    client.on('error', () => {
      if (this.client === client) this.drop();
    });
    try {
      await client.connect();
    } catch (err) {
      void client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    return client;
  }

  private drop(): void {
    const client = this.client;
    this.client = undefined;
    void client?.end().catch(() => undefined);
  }
}
