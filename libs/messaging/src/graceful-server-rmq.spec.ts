import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GracefulServerRMQ } from './graceful-server-rmq.js';

/** The protected route lookup, as Nest's RMQ server calls it for each message. */
class RouteProbe extends GracefulServerRMQ {
  routeOf(pattern: string): string {
    return this.getRouteFromPattern(pattern);
  }
}

describe('GracefulServerRMQ routes', () => {
  const server = new RouteProbe({ urls: ['amqp://127.0.0.1:1'], queue: 'unused' });

  it('takes a plain pattern as its own route, without parsing it', () => {
    assert.equal(server.routeOf('projects.list'), 'projects.list');
    assert.equal(server.routeOf('health.ping'), 'health.ping');
  });

  it('still routes an object pattern as Nest does (its keys sorted)', () => {
    assert.equal(server.routeOf('{"role":"x","cmd":"y"}'), '{"cmd":"y","role":"x"}');
  });
});
