import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { connect, createServer } from 'node:net';
import { describe, it } from 'node:test';
import { coalesceWrites } from './broker-writes.js';

describe('coalesceWrites', () => {
  it('holds the writes of one turn and sends them together, in order, once it ends', async () => {
    const received: Buffer[] = [];
    const server = createServer((peer: Socket) => peer.on('data', (chunk) => received.push(chunk)));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    try {
      coalesceWrites(socket);
      for (let i = 0; i < 3; i++) socket.write(`frame ${i};`);
      assert.equal(socket.writableCorked, 1, 'held during the turn');
      await new Promise((resolve) => process.nextTick(resolve));
      assert.equal(socket.writableCorked, 0, 'sent once the turn is over');
      socket.write('next turn;');
      assert.equal(socket.writableCorked, 1);
      socket.end();
      await once(socket, 'close');
      assert.equal(Buffer.concat(received).toString(), 'frame 0;frame 1;frame 2;next turn;');
    } finally {
      server.close();
    }
  });
});
