import { Socket } from 'node:net';
import type { AmqpConnectionManager } from 'amqp-connection-manager';

/**
 * Writes to a socket made in one turn of the event loop leave together, in one system
 * call, once the turn's code has run. amqplib writes each message's frames apart; under
 * load one turn publishes several requests, replies or acks, and one writev costs this
 * process and the broker less than one write each (bench/results/2026-11-27-api-latency-3.md).
 */
export function coalesceWrites(socket: Socket): void {
  const write = socket.write.bind(socket);
  socket.write = ((...args: Parameters<typeof write>) => {
    if (socket.writableCorked === 0) {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }
    return write(...args);
  }) as typeof socket.write;
}

/** The socket under an amqplib connection, where amqplib keeps it (connection.stream). */
function socketOf(channelModel: unknown): Socket | undefined {
  const stream = (channelModel as { connection?: { stream?: unknown } }).connection?.stream;
  return stream instanceof Socket ? stream : undefined;
}

/** Coalesces the writes of every connection the manager opens, reconnections included. */
export function coalesceBrokerWrites(manager: AmqpConnectionManager): AmqpConnectionManager {
  manager.on('connect', ({ connection }) => {
    const socket = socketOf(connection);
    if (socket) coalesceWrites(socket);
  });
  return manager;
}
