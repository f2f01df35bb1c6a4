import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type {
  RecoveryWindow,
  WalArchiveEntry,
  WalArchivePage,
  WalReceiverStatus,
} from '@pgcloud/contracts';
import type { ApiClient } from '@pgcloud/testing';
import { WAL_SEGMENT_BYTES } from '@pgcloud/postgres';
import { eventuallyDefined } from '@pgcloud/testing';
import { expectData } from './assertions.js';

export async function receiverStatus(api: ApiClient, pitrPath: string): Promise<WalReceiverStatus> {
  return expectData<WalReceiverStatus>(await api.get(`${pitrPath}/receiver-status`), 200);
}

export async function recoveryWindow(api: ApiClient, pitrPath: string): Promise<RecoveryWindow> {
  return expectData<RecoveryWindow>(await api.get(`${pitrPath}/recovery-window`), 200);
}

/** Waits until the receiver streams and the window exists (the base backup is done). */
export async function waitForArchive(
  api: ApiClient,
  pitrPath: string,
  timeoutMs = 90_000,
): Promise<RecoveryWindow> {
  return eventuallyDefined(
    'the receiver streams and the window opens',
    async () => {
      const status = await receiverStatus(api, pitrPath);
      const window = await recoveryWindow(api, pitrPath);
      return status.status === 'running' && window.to !== null ? window : undefined;
    },
    { timeoutMs },
  );
}

/** Every completed segment, page by page, and the totals of the last page. */
export async function allSegments(
  api: ApiClient,
  pitrPath: string,
  limit = 1000,
): Promise<{ segments: WalArchiveEntry[]; totalCount: number; totalSize: number }> {
  const segments: WalArchiveEntry[] = [];
  let cursor: string | null = null;
  let page: WalArchivePage;
  do {
    const query: string = `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    page = expectData<WalArchivePage>(await api.get(`${pitrPath}/wal${query}`), 200);
    segments.push(...page.archives);
    cursor = page.next_cursor;
  } while (cursor);
  return { segments, totalCount: page.total_count, totalSize: page.total_size_bytes };
}

/** The segment numbers a list of segment names holds, checked to follow one another. */
export function gapsIn(names: string[]): string[] {
  const gaps: string[] = [];
  const numbers = names.map(
    (n) => BigInt(`0x${n.slice(8, 16)}`) * 256n + BigInt(`0x${n.slice(16)}`),
  );
  for (let i = 1; i < numbers.length; i++)
    if (numbers[i] !== (numbers[i - 1] ?? 0n) + 1n) gaps.push(`${names[i - 1]} -> ${names[i]}`);
  return gaps;
}

/**
 * Whether a completed segment is in S3, given the names of the objects under its timeline:
 * compressed (`<name>.zst`), whole under its name, or as pieces (`<name>.<start>-<end>`, hex
 * offsets) one after the other from its start to its end.
 */
export function segmentStored(name: string, objects: ReadonlySet<string>): boolean {
  if (objects.has(`${name}.zst`) || objects.has(name)) return true;
  const pieces = [...objects].flatMap((object) => {
    const piece = /^([0-9A-F]{24})\.([0-9a-f]{8})-([0-9a-f]{8})$/.exec(object);
    return piece?.[1] === name
      ? [{ start: parseInt(piece[2] ?? '', 16), end: parseInt(piece[3] ?? '', 16) }]
      : [];
  });
  let at = 0;
  for (;;) {
    const ends = pieces.filter((p) => p.start === at && p.end > at).map((p) => p.end);
    if (ends.length === 0) return at === WAL_SEGMENT_BYTES;
    at = Math.max(...ends);
  }
}

/** The pid of the pg_receivewal streaming a database's WAL, and of the worker that runs it. */
export async function receivewalOf(
  databaseId: string,
): Promise<{ pid: number; parent: number } | undefined> {
  const { stdout } = await promisify(execFile)('ps', ['-eo', 'pid=,ppid=,args=']).catch(() => ({
    stdout: '',
  }));
  for (const line of stdout.split('\n')) {
    const [pid, parent, ...args] = line.trim().split(/\s+/);
    const command = args.join(' ');
    if (command.includes('pg_receivewal') && command.includes(`/${databaseId}/wal`))
      return { pid: Number(pid), parent: Number(parent) };
  }
  return undefined;
}

/** Writes rows on a connection string until `stop` is aborted; answers the rows written. */
export async function keepWriting(
  write: () => Promise<unknown>,
  signal: AbortSignal,
): Promise<number> {
  let rows = 0;
  while (!signal.aborted) {
    await write();
    rows++;
  }
  return rows;
}

/** A WAL position (`X/XXXXXXXX`) as a number, to compare positions. */
export function lsnValue(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}
