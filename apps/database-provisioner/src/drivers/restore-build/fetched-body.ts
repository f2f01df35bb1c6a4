import { Readable } from 'node:stream';

/**
 * A fetched response's body as a Node stream that fails once `signal` is aborted.
 *
 * The signal given to fetch() alone does not do it: Node 20's fetch (undici 6) leaves the
 * body neither errored nor closed when the abort comes after the whole answer has arrived
 * but before it has all been read (a reader slower than the network: tar, a file). A read
 * then waits for ever, and so does whatever waits for it (a cancelled restore's cleanup).
 * Here the stream itself is destroyed on abort, whatever fetch did.
 */
export function fetchedBody(body: ReadableStream<Uint8Array>, signal?: AbortSignal): Readable {
  return Readable.fromWeb(body, signal ? { signal } : {});
}
