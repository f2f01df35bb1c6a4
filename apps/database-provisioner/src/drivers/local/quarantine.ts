import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

// A quarantined server's folder is named `<server id>@<epoch ms when set aside>`.
const ENTRY = /^([A-Za-z0-9_-]{1,63})@(\d{13})$/;

/**
 * Moves a stopped server's whole directory into the quarantine folder, named by its id
 * and the moment, on the same file system (a rename, never a copy). Answers the new path.
 */
export async function setAside(
  quarantineDir: string,
  serverDir: string,
  serverId: string,
  nowMs = Date.now(),
): Promise<string> {
  await mkdir(quarantineDir, { recursive: true, mode: 0o700 });
  const target = join(quarantineDir, `${serverId}@${nowMs}`);
  await rename(serverDir, target);
  return target;
}

/** Deletes every quarantined server set aside before `beforeMs`; answers their ids. */
export async function purgeSetAside(quarantineDir: string, beforeMs: number): Promise<string[]> {
  const entries = await readdir(quarantineDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const purged: string[] = [];
  for (const name of entries) {
    const match = ENTRY.exec(name);
    if (!match?.[1] || Number(match[2]) >= beforeMs) continue;
    await rm(join(quarantineDir, name), { recursive: true, force: true });
    purged.push(match[1]);
  }
  return purged;
}
