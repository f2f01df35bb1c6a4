import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { standInHba, standInSettings } from './cnpg-server-config.js';

const input = {
  clusterName: 'srv-abc-g1',
  port: 54321,
  socketDir: '/tmp/s/abc',
  certFile: '/d/tls/server.crt',
  keyFile: '/d/tls/server.key',
};

describe('standInSettings: a stand-in server postgresql settings from a Cluster', () => {
  it("lets the Cluster's parameters override CNPG's defaults and fixes what the operator owns", () => {
    const settings = standInSettings({
      ...input,
      parameters: { work_mem: '8MB', wal_level: 'replica', ssl_min_protocol_version: 'TLSv1.2' },
    });
    assert.equal(settings.work_mem, '8MB');
    assert.equal(settings.wal_level, 'replica');
    assert.equal(settings.ssl_min_protocol_version, 'TLSv1.2');
    assert.equal(settings.max_replication_slots, 32);
    assert.equal(settings.port, 54321);
    assert.equal(settings.listen_addresses, '127.0.0.1');
    assert.equal(settings.unix_socket_directories, '/tmp/s/abc');
    assert.equal(settings.ssl, 'on');
    assert.equal(settings.ssl_cert_file, '/d/tls/server.crt');
    assert.equal(settings.ssl_key_file, '/d/tls/server.key');
    assert.equal(settings.cluster_name, 'srv-abc-g1');
  });

  it('keeps CNPG defaults where the Cluster says nothing (TLS 1.3 only, logical WAL)', () => {
    const settings = standInSettings({ ...input, parameters: {} });
    assert.equal(settings.ssl_min_protocol_version, 'TLSv1.3');
    assert.equal(settings.wal_level, 'logical');
  });

  it('refuses parameters CNPG fixes or blocks, naming them', () => {
    assert.throws(
      () =>
        standInSettings({ ...input, parameters: { port: '5433', ssl: 'off', work_mem: '4MB' } }),
      /may not set them: port, ssl$/,
    );
  });
});

describe('standInHba: pg_hba.conf as CNPG writes it', () => {
  it("puts the operator's local line first, the Cluster's lines in order, CNPG's default last", () => {
    const lines = standInHba(['hostssl all all all scram-sha-256', 'hostnossl all all all reject'])
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    assert.deepEqual(lines, [
      'local all postgres trust',
      'hostssl all all all scram-sha-256',
      'hostnossl all all all reject',
      'host all all all scram-sha-256',
    ]);
  });

  it('refuses a line that would smuggle in another', () => {
    assert.throws(() => standInHba(['hostssl all all all scram-sha-256\nhost all all all trust']));
  });
});
