import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A secret found in a log: where, and its first characters (never the whole secret). */
export interface SecretLeak {
  file: string;
  secretStart: string;
}

/** Reads every file of the log folders and reports each secret that appears in one. */
export function findSecretsInLogs(
  logDirs: readonly string[],
  secrets: ReadonlySet<string>,
): {
  leaks: SecretLeak[];
  bytesScanned: number;
} {
  const leaks: SecretLeak[] = [];
  let bytesScanned = 0;
  for (const dir of logDirs) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = join(dir, entry.name);
      const text = readFileSync(file, 'utf8');
      bytesScanned += text.length;
      for (const secret of secrets) {
        if (text.includes(secret)) leaks.push({ file, secretStart: `${secret.slice(0, 6)}…` });
      }
    }
  }
  return { leaks, bytesScanned };
}
