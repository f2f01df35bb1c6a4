import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Every TypeScript source of the apps and libraries that runs in a deployment. */
function deployedSources(dir = ROOT, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // What never runs in a deployment: tests, the development stack, the stand-ins, the CLI.
      const notDeployed = ['e2e', 'testing', 'devstack', 'kube-stand-in', 'cli'];
      if (['node_modules', 'dist', '.git', '.data', ...notDeployed].includes(entry.name)) continue;
      deployedSources(path, found);
    } else if (/(?<!\.spec|\.int-spec|fixture|fixtures)\.ts$/.test(entry.name)) found.push(path);
  }
  return found;
}

describe('PostgreSQL tools run from argument vectors, never through a shell', () => {
  const files = [...deployedSources(join(ROOT, 'apps')), ...deployedSources(join(ROOT, 'libs'))];

  it('finds the sources', () => {
    assert.ok(files.some((file) => file.endsWith('postmaster.ts')));
    assert.ok(files.some((file) => file.endsWith('local-cluster.ts')));
  });

  it('starts nothing through a shell', () => {
    // Options that start a shell, a shell named as the program, or child_process's exec,
    // which always runs one.
    const shells =
      /shell:\s*true|['"](\/bin\/)?(ba)?sh['"]\s*,\s*\[?\s*['"]-c['"]|import\s*{[^}]*\b(exec|execSync)\b[^}]*}\s*from\s*'node:child_process'/;
    const found = files.filter((file) => shells.test(readFileSync(file, 'utf8')));
    assert.deepEqual(
      found.map((file) => relative(ROOT, file)),
      [],
    );
  });

  it('never asks pg_ctl to start a server (pg_ctl runs postgres through /bin/sh)', () => {
    const starts = files.filter((file) => {
      const text = readFileSync(file, 'utf8');
      return /pg_ctl['"][\s\S]{0,200}['"]start['"]|runPgCtl\([^)]*['"]start['"]|pgCtl\([^)]*['"]start['"]/.test(
        text,
      );
    });
    assert.deepEqual(
      starts.map((file) => relative(ROOT, file)),
      [],
    );
  });
});
