import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { before, describe, it } from 'node:test';
import { allocatePort } from './port-allocator.js';

const HOST = '127.0.0.1';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, HOST, () => resolve(server));
  });
}

describe('allocatePort', () => {
  let busy: Server;
  let busyPort: number;

  before(async () => {
    busy = await listen(0);
    const address = busy.address();
    assert.ok(address && typeof address === 'object');
    busyPort = address.port;
  });

  it('answers undefined when every port of the range is in use or held: no room', async () => {
    const range = { first: busyPort, last: busyPort };
    assert.equal(await allocatePort(range, new Set(), HOST), undefined, 'in use on the host');
    assert.equal(await allocatePort(range, new Set([busyPort]), HOST), undefined, 'held');
  });

  it('never answers a port that a record holds, even when nothing listens on it', async () => {
    await new Promise<void>((resolve) => busy.close(() => resolve()));
    const range = { first: busyPort, last: busyPort };
    assert.equal(await allocatePort(range, new Set([busyPort]), HOST), undefined);
    assert.equal(await allocatePort(range, new Set(), HOST), busyPort);
  });
});
