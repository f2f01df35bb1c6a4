import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fetchedBody } from './fetched-body.js';

const BODY = Buffer.alloc(256 * 1024, 7);
const ABORTS = 300;
const SETTLE_MS = 5000;

describe('fetchedBody', () => {
  it('fails once aborted, wherever the answer and its reader are', async (t) => {
    const server = createServer((_request, response) =>
      response.writeHead(200, { 'content-length': BODY.length }).end(BODY),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const outcomes = new Map<string, number>();
    // Aborts from 0 to 14 ms into reading, by a reader slower than the network: with the
    // fetch signal alone, some of these reads waited for ever (a whole answer in, not read).
    for (let i = 0; i < ABORTS; i++) {
      const abort = new AbortController();
      const response = await fetch(url, { signal: abort.signal });
      assert.ok(response.body);
      const slowReader = new Writable({
        highWaterMark: 1024,
        write: (_chunk, _encoding, done) => void setTimeout(done, 2),
      });
      const read = pipeline(fetchedBody(response.body, abort.signal), slowReader).then(
        () => 'read whole',
        (err: Error) => err.name,
      );
      await sleep(i % 15);
      abort.abort();
      const outcome = await Promise.race([read, sleep(SETTLE_MS).then(() => 'still waiting')]);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    assert.equal(outcomes.get('still waiting'), undefined, JSON.stringify([...outcomes]));
    assert.ok((outcomes.get('AbortError') ?? 0) > 0, JSON.stringify([...outcomes]));
  });
});
