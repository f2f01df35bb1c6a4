// CPU time of every process on the machine during a run, per request answered, from
// /proc (Linux only): when the cores are full, these sums are what sets requests/s.
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * CPU milliseconds each process has used so far, by pid, with its group (see groupOf). By
 * pid, since a process may end between two readings (an idle pool's backend): its time
 * must not come off its group's.
 */
export type CpuReading = Map<string, { group: string; ms: number }>;

/** Linux reports CPU time in ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const MS_PER_TICK = 10;
/** This process, less its load generator thread: the baseline's and the floor's HTTP servers. */
export const BENCH_SERVERS = 'bench HTTP servers';
export const LOAD_GENERATOR = 'load generator';

/** utime + stime of a /proc/.../stat line, in milliseconds. */
export function cpuMsOfStat(stat: string): number {
  // The command name may hold spaces and parentheses; the fields follow the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
}

/** CPU time of the calling thread so far (a worker's own), or undefined without /proc. */
export function threadCpuMs(): number | undefined {
  try {
    return cpuMsOfStat(readFileSync('/proc/thread-self/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** The name a process is counted under: the app it runs, or what it is. */
function groupOf(pid: string, stat: string): string {
  if (pid === String(process.pid)) return BENCH_SERVERS;
  const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  if (command === 'postgres') return 'PostgreSQL';
  if (command === 'beam.smp') return 'RabbitMQ';
  if (command === 'redis-server') return 'Redis';
  if (command === 'node') {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const app = args.map((arg) => /apps\/([^/]+)\/dist\/main\.js$/.exec(arg)?.[1]).find(Boolean);
    if (app) return app;
    if (args.some((arg) => arg.endsWith('floor.js'))) return 'floor service';
  }
  return 'everything else';
}

/** Every process's CPU time so far; undefined where there is no /proc. */
export function readCpu(): CpuReading | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const reading: CpuReading = new Map();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      reading.set(pid, { group: groupOf(pid, stat), ms: cpuMsOfStat(stat) });
    } catch {
      // A process that ended between the listing and the read used no more CPU.
    }
  }
  return reading;
}

/**
 * CPU milliseconds each group used between two readings. A process started in between
 * counts whole; one that ended in between is left out.
 */
export function cpuUsed(before: CpuReading, after: CpuReading): Map<string, number> {
  const used = new Map<string, number>();
  for (const [pid, { group, ms }] of after)
    used.set(group, (used.get(group) ?? 0) + ms - (before.get(pid)?.ms ?? 0));
  return used;
}

/** Adds each group's milliseconds of `used` to `total`'s. */
export function addCpuUsed(total: Map<string, number>, used: Map<string, number>): void {
  for (const [group, ms] of used) total.set(group, (total.get(group) ?? 0) + ms);
}

/**
 * The lines of a target's CPU per request: each group's milliseconds over the `responses`
 * answered (the load generator's `loadMs` moved out of this process's), the total, and the
 * requests/s that total allows on this machine's cores.
 */
export function formatCpu(
  label: string,
  usedByGroup: Map<string, number>,
  loadMs: number,
  responses: number,
): string[] {
  const used = new Map(usedByGroup);
  used.set(BENCH_SERVERS, (used.get(BENCH_SERVERS) ?? 0) - loadMs);
  used.set(LOAD_GENERATOR, loadMs);
  const perRequest = [...used]
    .map(([group, ms]): [string, number] => [group, ms / responses])
    .filter(([, ms]) => ms >= 0.005)
    .sort((a, b) => b[1] - a[1]);
  const total = perRequest.reduce((sum, [, ms]) => sum + ms, 0);
  const cores = availableParallelism();
  return [
    `${label}, CPU ms per request:`,
    ...perRequest.map(([group, ms]) => `  ${group.padEnd(50)}${ms.toFixed(3).padStart(8)}`),
    `  ${'total'.padEnd(50)}${total.toFixed(3).padStart(8)}` +
      `  (${cores} cores: at most ${Math.round((cores * 1000) / total)} req/s)`,
  ];
}
