import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { ServiceName } from './index.js';
import { PATTERN_GROUPS, SERVICE_CALLS } from './index.js';
import type { AppName } from './service-graph.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function sources(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, found);
    else if (/(?<!\.spec|\.int-spec)\.ts$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** The services an app's code calls: every `.call(X_PATTERNS.name` in its sources. */
function calledBy(app: AppName): Set<ServiceName> {
  const called = new Set<ServiceName>();
  for (const file of sources(join(ROOT, 'apps', app, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const [, group, name] of text.matchAll(/\.call\(\s*([A-Z_]+)\.(\w+)/g)) {
      const def = PATTERN_GROUPS[group]?.[name];
      assert.ok(def, `${file} calls ${group}.${name}, which the catalogue does not declare`);
      called.add(def.service);
    }
  }
  return called;
}

/** README's table of calls: app -> the services it calls. */
function readmeCalls(): Record<string, string[]> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## Calls and events\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'README has a "Calls and events" section');
  const rows: Record<string, string[]> = {};
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const app = /^`(apps\/)?([a-z-]+)`$/.exec(cells[1] ?? '')?.[2];
    if (!app) continue;
    rows[app] = (cells[2] ?? '')
      .split(',')
      .map((name) => name.replace(/`/g, '').trim())
      .filter((name) => name && name !== '-');
  }
  return rows;
}

describe('the call graph', () => {
  it('each app calls only the services SERVICE_CALLS gives it', () => {
    for (const app of Object.keys(SERVICE_CALLS) as AppName[]) {
      const allowed = new Set(SERVICE_CALLS[app]);
      for (const service of calledBy(app))
        assert.ok(allowed.has(service), `${app} calls ${service}, which its row does not allow`);
    }
  });

  it('README shows the same graph', () => {
    const rows = readmeCalls();
    assert.deepEqual(Object.keys(rows).sort(), Object.keys(SERVICE_CALLS).sort());
    for (const [app, calls] of Object.entries(SERVICE_CALLS))
      assert.deepEqual(rows[app].sort(), [...calls].sort(), `README's row of ${app}`);
  });
});
