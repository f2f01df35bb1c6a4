import type { SettingValue } from '@pgcloud/postgres';
import { SUPERUSER } from '@pgcloud/postgres';

/** The first line of the files the stand-in writes into a server's data directory. */
export const STAND_IN_HEADER =
  "Written by pgcloud's CNPG stand-in (tests only), which rewrites it.";

/**
 * Parameters CNPG 1.25 manages itself ("fixed") or forbids ("blocked"): its validating
 * webhook refuses a Cluster that sets one, and so does the stand-in.
 */
const OPERATOR_PARAMETERS = new Set([
  'allow_system_table_mods',
  'archive_cleanup_command',
  'archive_command',
  'archive_mode',
  'bonjour',
  'bonjour_name',
  'cluster_name',
  'config_file',
  'data_directory',
  'data_sync_retry',
  'event_source',
  'external_pid_file',
  'hba_file',
  'hot_standby',
  'ident_file',
  'jit_provider',
  'listen_addresses',
  'log_destination',
  'log_directory',
  'log_file_mode',
  'log_filename',
  'log_rotation_age',
  'log_rotation_size',
  'log_truncate_on_rotation',
  'logging_collector',
  'port',
  'primary_conninfo',
  'primary_slot_name',
  'promote_trigger_file',
  'recovery_end_command',
  'recovery_min_apply_delay',
  'recovery_target',
  'recovery_target_action',
  'recovery_target_inclusive',
  'recovery_target_lsn',
  'recovery_target_name',
  'recovery_target_time',
  'recovery_target_timeline',
  'recovery_target_xid',
  'restart_after_crash',
  'restore_command',
  'shared_preload_libraries',
  'ssl',
  'ssl_ca_file',
  'ssl_cert_file',
  'ssl_crl_file',
  'ssl_dh_params_file',
  'ssl_ecdh_curve',
  'ssl_key_file',
  'ssl_passphrase_command',
  'ssl_passphrase_command_supports_reload',
  'ssl_prefer_server_ciphers',
  'stats_temp_directory',
  'synchronous_standby_names',
  'syslog_facility',
  'syslog_ident',
  'syslog_sequence_numbers',
  'syslog_split_messages',
  'temp_tablespaces',
  'unix_socket_directories',
  'unix_socket_group',
  'unix_socket_permissions',
]);

/** CNPG's defaults, which `spec.postgresql.parameters` may override. */
const OPERATOR_DEFAULTS: Record<string, SettingValue> = {
  archive_timeout: '5min',
  dynamic_shared_memory_type: 'posix',
  full_page_writes: 'on',
  max_parallel_workers: 32,
  max_replication_slots: 32,
  max_worker_processes: 32,
  shared_memory_type: 'mmap',
  ssl_max_protocol_version: 'TLSv1.3',
  ssl_min_protocol_version: 'TLSv1.3',
  wal_keep_size: '512MB',
  wal_level: 'logical',
  wal_log_hints: 'on',
  wal_receiver_timeout: '5s',
  wal_sender_timeout: '5s',
};

/** Where one stand-in server listens and finds its certificate. */
export interface StandInConfInput {
  clusterName: string;
  port: number;
  socketDir: string;
  certFile: string;
  keyFile: string;
  /** ssl_ca_file: the CA client certificates are checked against. */
  clientCaFile?: string;
  parameters: Record<string, string>;
}

/**
 * The server's settings: CNPG's defaults, then the Cluster's parameters, then what the
 * operator fixes. Unlike CNPG (listen on every address, port 5432, csvlog through the
 * logging collector, WAL archived by its manager), the stand-in listens on 127.0.0.1 at
 * a port of its own with a socket directory of its own, logs to pg_ctl's log file, and
 * archives nothing (`/bin/true`, what CNPG's archiver does without a backup configured).
 */
export function standInSettings(input: StandInConfInput): Record<string, SettingValue> {
  const refused = Object.keys(input.parameters).filter((name) => OPERATOR_PARAMETERS.has(name));
  if (refused.length > 0)
    throw new Error(
      `CNPG manages these parameters itself, a Cluster may not set them: ${refused.join(', ')}`,
    );
  return {
    ...OPERATOR_DEFAULTS,
    ...input.parameters,
    cluster_name: input.clusterName,
    port: input.port,
    listen_addresses: '127.0.0.1',
    unix_socket_directories: input.socketDir,
    unix_socket_permissions: '0700',
    ssl: 'on',
    ssl_cert_file: input.certFile,
    ssl_key_file: input.keyFile,
    ...(input.clientCaFile ? { ssl_ca_file: input.clientCaFile } : {}),
    hot_standby: 'on',
    archive_mode: 'on',
    archive_command: '/bin/true',
    // As CNPG: a crashed backend ends the postmaster instead of a restart in place (there
    // the pod restarts; here the server stays down until wake()).
    restart_after_crash: 'off',
    logging_collector: 'off',
    log_destination: 'stderr',
  };
}

/**
 * pg_hba.conf as CNPG writes it, less its certificate lines for its own replicas (the
 * stand-in has none): the local line the operator logs in with, the Cluster's lines in
 * order, then CNPG's closing default `host all all all scram-sha-256`. That last line
 * accepts a password login WITHOUT TLS from anywhere the Cluster's lines did not settle:
 * a Cluster that must refuse plain connections needs a `hostnossl ... reject` line.
 */
export function standInHba(clusterLines: readonly string[]): string {
  const bad = clusterLines.find((line) => /[\r\n\0]/.test(line));
  if (bad !== undefined) throw new Error(`not one pg_hba line: ${JSON.stringify(bad)}`);
  return [
    `# ${STAND_IN_HEADER}`,
    `local all ${SUPERUSER} trust`,
    '# spec.postgresql.pg_hba',
    ...clusterLines,
    "# CNPG's default rule",
    'host all all all scram-sha-256',
    '',
  ].join('\n');
}
