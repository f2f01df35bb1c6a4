/** Message patterns answered by database-provisioner. */
export const DATABASE_PATTERNS = {
  /** CreateDatabaseRequest -> Database (status provisioning). */
  create: 'databases.create',
  /** ProjectRef -> {databases: Database[]}. */
  list: 'databases.list',
  /** DatabaseRef -> Database. */
  get: 'databases.get',
  /** DatabaseRef -> ConnectionDetails (needs status running). */
  url: 'databases.url',
  /** DatabaseRef -> Deleted. */
  delete: 'databases.delete',
  /** ProjectRef -> {count}: how many databases a project holds (for project-service). */
  countForProject: 'databases.count-for-project',
  /** ProjectRef -> {deleted: number}: removes every database of a project (forced project delete). */
  deleteForProject: 'databases.delete-for-project',
  /** {} -> {pem}: the deployment's CA certificate, which issues the servers' certificates. */
  caCertificate: 'databases.ca-certificate',
  /** DatabaseIdRef -> BackupSource (needs status running); between services only. */
  backupSource: 'databases.backup-source',
  /** {} -> {databases: RunningDatabase[]}: every running database, for schedules. */
  running: 'databases.running',
} as const;
