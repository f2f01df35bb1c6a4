import type { DatabaseConfig } from '@pgcloud/contracts';
import type { SettingValue } from '@pgcloud/postgres';
import { renderHbaRules } from '@pgcloud/postgres';
import { isLoopbackAddress } from '@pgcloud/config';
import { REPLICATION_ROLE } from '../database-driver.js';
import { sizeSettings } from '../server-size.js';

// Small, so that many local servers fit on one machine; a managed pooler is a later concern.
const MAX_CONNECTIONS = 50;
/** The first line of every file the driver writes into a server's data directory. */
export const GENERATED_HEADER = "Written by pgcloud's local driver, which rewrites this file.";

/** What one server's postgresql.conf settings are made from. */
export interface ServerConfInput {
  port: number;
  listenAddress: string;
  socketDir: string;
  certFile: string;
  keyFile: string;
  config: DatabaseConfig;
}

/** Every setting pgcloud gives one local server, in the order they are written. */
export function serverSettings(input: ServerConfInput): Record<string, SettingValue> {
  return {
    port: input.port,
    listen_addresses: input.listenAddress,
    unix_socket_directories: input.socketDir,
    unix_socket_permissions: '0700',
    ssl: 'on',
    ssl_cert_file: input.certFile,
    ssl_key_file: input.keyFile,
    ssl_min_protocol_version: 'TLSv1.2',
    password_encryption: 'scram-sha-256',
    max_connections: MAX_CONNECTIONS,
    wal_level: 'replica',
    max_wal_senders: 10,
    max_replication_slots: 10,
    max_slot_wal_keep_size: '2GB',
    // Commit times, as PITR targets them, readable with pg_xact_commit_timestamp().
    track_commit_timestamp: 'on',
    // Many servers share one machine: no huge pages to reserve, and none to fail on.
    huge_pages: 'off',
    // pg_ctl -l sends the server's stderr to the server's own log file.
    logging_collector: 'off',
    log_destination: 'stderr',
    ...sizeSettings(input.config),
  };
}

/** Reads the port back from a server's settings file (the one source of truth for it). */
export function portFromConf(text: string): number | undefined {
  const match = /^port = (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * pg_hba.conf for one server: the socket is trusted (its directory is 0700, so only the
 * OS user and root reach it); TCP takes TLS with scram-sha-256 only. There are no `host`
 * lines, so a connection without TLS finds no entry and is refused.
 */
export function renderHba(listenAddress: string): string {
  const networks = isLoopbackOnly(listenAddress)
    ? ['127.0.0.1/32', '::1/128']
    : ['127.0.0.1/32', '::1/128', '0.0.0.0/0', '::/0'];
  const rows = [
    ['local', 'all', 'all', '', 'trust'],
    ['local', 'replication', 'all', '', 'trust'],
    ...networks.map((net) => ['hostssl', 'replication', REPLICATION_ROLE, net, 'scram-sha-256']),
    ...networks.map((net) => ['hostssl', 'all', 'all', net, 'scram-sha-256']),
  ];
  return renderHbaRules(rows, GENERATED_HEADER);
}

/** True when listen_addresses names only loopback addresses (or none: sockets only). */
export function isLoopbackOnly(listenAddress: string): boolean {
  return listenAddress
    .split(',')
    .map((address) => address.trim())
    .filter((address) => address.length > 0)
    .every(isLoopbackAddress);
}
