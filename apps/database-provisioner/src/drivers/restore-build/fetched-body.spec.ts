import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fetchBody } from './fetched-body.js';

const BODY = Buffer.alloc(256 * 1024, 7);
const ABORTS = 300;
const SETTLE_MS = 5000;

describe('fetchBody', () => {
  it('fails once aborted, wherever the answer and its reader are', async (t) => {
    const server = createServer((_request, response) =>
      response.writeHead(200, { 'content-length': BODY.length }).end(BODY),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const outcomes = new Map<string, number>();
    // Aborts from 0 to 14 ms into reading, by a reader slower than the network: with Node
    // 20's fetch, some of these reads waited for ever (a whole answer in, not read).
    for (let i = 0; i < ABORTS; i++) {
      const abort = new AbortController();
      const response = await fetchBody(url, abort.signal);
      assert.equal(response.statusCode, 200);
      const slowReader = new Writable({
        highWaterMark: 1024,
        write: (_chunk, _encoding, done) => void setTimeout(done, 2),
      });
      const read = pipeline(response, slowReader).then(
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

  it('fails a body whose connection is cut before its end', async (t) => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-length': BODY.length * 2 });
      response.write(BODY, () => response.destroy());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const response = await fetchBody(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    let read = 0;
    await assert.rejects(async () => {
      for await (const chunk of response as AsyncIterable<Buffer>) read += chunk.length;
    });
    assert.ok(read <= BODY.length);
  });
});
