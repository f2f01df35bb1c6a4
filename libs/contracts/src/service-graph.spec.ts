import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { EventDef, RpcDef, ServiceName } from './index.js';
import * as contracts from './index.js';
import { APP_NAMES, PATTERN_GROUPS, SERVICE_CALLS } from './index.js';
import type { AppName } from './context.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function sources(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, found);
    else if (/(?<!\.spec|\.int-spec)\.ts$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** The patterns an app's code sends: every `.call(X_PATTERNS.name` in its sources. */
function patternsCalledBy(app: AppName): Set<RpcDef<object, unknown>> {
  const called = new Set<RpcDef<object, unknown>>();
  for (const file of sources(join(ROOT, 'apps', app, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const [, group, name] of text.matchAll(/\.call\(\s*([A-Z_]+)\.(\w+)/g)) {
      const def = PATTERN_GROUPS[group]?.[name];
      assert.ok(def, `${file} calls ${group}.${name}, which the catalogue does not declare`);
      called.add(def);
    }
  }
  return called;
}

/** The services an app's code calls. */
function calledBy(app: AppName): Set<ServiceName> {
  return new Set([...patternsCalledBy(app)].map((def) => def.service));
}

/** Every declared event, by the name code refers to it with (`X_EVENTS.name`). */
const EVENT_GROUPS = Object.fromEntries(
  Object.entries(contracts).filter(([name]) => name.endsWith('_EVENTS')),
) as Record<string, Record<string, EventDef<object>>>;

/** The apps whose code writes each event to its outbox (`.add(manager, X_EVENTS.name`). */
function eventWriters(): Map<EventDef<object>, Set<AppName>> {
  const writers = new Map<EventDef<object>, Set<AppName>>();
  for (const app of APP_NAMES)
    for (const file of sources(join(ROOT, 'apps', app, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const [, group, name] of text.matchAll(/\.add\(\s*\w+,\s*([A-Z_]+_EVENTS)\.(\w+)/g)) {
        const def = EVENT_GROUPS[group]?.[name];
        assert.ok(def, `${file} writes ${group}.${name}, which the contracts do not declare`);
        writers.set(def, (writers.get(def) ?? new Set()).add(app));
      }
    }
  return writers;
}

/** The table of calls of docs/architecture.md: app -> the services it calls. */
function documentedCalls(): Record<string, string[]> {
  const page = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = page.split('\n## Calls and events\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'docs/architecture.md has a "Calls and events" section');
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

  it("each pattern's senders are exactly the apps whose code sends it", () => {
    const senders = new Map<RpcDef<object, unknown>, AppName[]>();
    for (const app of APP_NAMES)
      for (const def of patternsCalledBy(app)) senders.set(def, [...(senders.get(def) ?? []), app]);
    for (const group of Object.values(PATTERN_GROUPS))
      for (const def of Object.values(group)) {
        assert.deepEqual(
          [...def.senders].sort(),
          (senders.get(def) ?? []).sort(),
          `the senders of ${def.pattern}`,
        );
        for (const app of def.senders)
          assert.ok(SERVICE_CALLS[app].includes(def.service), `${app} may not call ${def.service}`);
      }
  });

  it('each event is written by its publisher alone', () => {
    const writers = eventWriters();
    for (const group of Object.values(EVENT_GROUPS))
      for (const def of Object.values(group))
        assert.deepEqual([...(writers.get(def) ?? [])], [def.publisher], def.name);
  });

  it('docs/architecture.md shows the same graph', () => {
    const rows = documentedCalls();
    assert.deepEqual(Object.keys(rows).sort(), Object.keys(SERVICE_CALLS).sort());
    for (const [app, calls] of Object.entries(SERVICE_CALLS))
      assert.deepEqual(rows[app].sort(), [...calls].sort(), `the documented row of ${app}`);
  });
});
