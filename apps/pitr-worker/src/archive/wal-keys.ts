/** Where a database's WAL lives in S3 (shared DESIGN.md section 5): ids, never names. */
export function walPrefix(projectId: string, databaseId: string): string {
  return `projects/${projectId}/databases/${databaseId}/wal/`;
}

/** A completed segment's object. */
export function segmentKey(
  projectId: string,
  databaseId: string,
  timeline: number,
  name: string,
): string {
  return `${walPrefix(projectId, databaseId)}${timeline}/${name}`;
}

/** The segment still being written, replaced as it grows. */
export function partialKey(
  projectId: string,
  databaseId: string,
  timeline: number,
  name: string,
): string {
  return `${segmentKey(projectId, databaseId, timeline, name)}.partial`;
}
