import { access, readdir } from 'node:fs/promises';

/** Whether a file or directory is there (and reachable by this process). */
export async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The directories in `dir`; none when it does not exist (yet). */
export async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    },
  );
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}
