import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderConf } from '@pgcloud/postgres';
import {
  GENERATED_HEADER,
  isLoopbackOnly,
  portFromConf,
  renderHba,
  serverSettings,
} from './cluster-config.js';

const defaults = { cpu: 1, memory: 1, storage: 10 };

describe('postgresql.conf text', () => {
  const input = {
    port: 20001,
    listenAddress: '127.0.0.1',
    socketDir: "/data/servers/srv_1/it's socket",
    certFile: '/data/servers/srv_1/tls/server.crt',
    keyFile: '/data/servers/srv_1/tls/server.key',
    config: defaults,
  };

  it('holds the replication, TLS and size settings, strings quoted', () => {
    const text = renderConf(serverSettings(input), GENERATED_HEADER);
    for (const line of [
      'port = 20001',
      "listen_addresses = '127.0.0.1'",
      "unix_socket_directories = '/data/servers/srv_1/it''s socket'",
      "ssl = 'on'",
      "password_encryption = 'scram-sha-256'",
      "wal_level = 'replica'",
      'max_wal_senders = 10',
      'max_replication_slots = 10',
      "max_slot_wal_keep_size = '2GB'",
      "track_commit_timestamp = 'on'",
      "huge_pages = 'off'",
      'max_connections = 50',
      "shared_buffers = '256MB'",
    ]) {
      assert.ok(text.split('\n').includes(line), `missing: ${line}\n${text}`);
    }
  });

  it('reads the port back', () => {
    assert.equal(portFromConf(renderConf(serverSettings(input), GENERATED_HEADER)), 20001);
    assert.equal(portFromConf('# nothing'), undefined);
  });
});

describe('pg_hba.conf text', () => {
  const rules = (text: string): string[][] =>
    text
      .split('\n')
      .filter((line) => line.length > 0 && !line.startsWith('#'))
      .map((line) => line.split(/\s+/));

  it('trusts the socket and takes only TLS with SCRAM over TCP', () => {
    const lines = rules(renderHba('127.0.0.1'));
    assert.deepEqual(lines[0], ['local', 'all', 'all', 'trust']);
    const tcp = lines.filter(([type]) => type !== 'local');
    assert.ok(tcp.length > 0);
    for (const line of tcp) {
      assert.equal(line[0], 'hostssl');
      assert.equal(line.at(-1), 'scram-sha-256');
    }
    assert.deepEqual(
      tcp.map((line) => line[3]),
      ['127.0.0.1/32', '::1/128', '127.0.0.1/32', '::1/128'],
    );
    assert.ok(tcp.some((line) => line[1] === 'replication' && line[2] === 'pgcloud_replication'));
  });

  it('opens other networks only when the server listens beyond loopback', () => {
    const networks = rules(renderHba('*')).map((line) => line[3]);
    assert.ok(networks.includes('0.0.0.0/0'));
    assert.ok(networks.includes('::/0'));
  });

  it('knows loopback listen addresses', () => {
    assert.equal(isLoopbackOnly('127.0.0.1'), true);
    assert.equal(isLoopbackOnly('localhost, ::1'), true);
    assert.equal(isLoopbackOnly(''), true);
    assert.equal(isLoopbackOnly('*'), false);
    assert.equal(isLoopbackOnly('0.0.0.0'), false);
    assert.equal(isLoopbackOnly('127.0.0.1,10.0.0.5'), false);
  });
});
