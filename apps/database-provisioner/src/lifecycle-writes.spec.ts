import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The sources, beside the compiled spec: dist/ mirrors src/.
const SRC = fileURLToPath(new URL('../src', import.meta.url));

/** The provisioner's sources, tests and migrations left out. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sources(path);
    const test = /\.(spec|int-spec|fixture|testing)\.ts$/.test(entry.name);
    return entry.name.endsWith('.ts') && !test ? [path] : [];
  });
}

/** The files that write statuses, and the table each must write them from. */
const WRITERS: Record<string, RegExp> = {
  'databases/databases.repository.ts':
    /status: DATABASE_MOVES\[move\]\.to\b|SET status = 'deleting'/,
  'restores/restores.repository.ts': /status: RESTORE_MOVES\[move\]\.to\b|\bphase\b/,
  'drills/drills.repository.ts': /status: DRILL_MOVES\[move\]\.to\b|\bphase\b/,
};

/** The argument text of every `.update(` call in `code`, to its closing parenthesis. */
function updateCalls(code: string): string[] {
  const calls: string[] = [];
  for (let at = code.indexOf('.update('); at >= 0; at = code.indexOf('.update(', at + 1)) {
    let depth = 0;
    let end = at + '.update'.length;
    for (; end < code.length; end++) {
      if (code[end] === '(') depth++;
      if (code[end] === ')' && --depth === 0) break;
    }
    calls.push(code.slice(at, end + 1));
  }
  return calls;
}

const STATE_KEY = /\b(status|phase)\s*:/;
const STATE_SQL = /\bUPDATE\b[^`]*\bSET\b[^`]*\b(status|phase)\s*=/i;

/**
 * Every write of a database's, a restore's or a drill's status or phase is a move of its
 * lifecycle's table (databases/database-lifecycle.ts, restores/restore-lifecycle.ts,
 * drills/drill-lifecycle.ts), made by its
 * repository, which refuses a move the table does not hold. This proves no other file
 * writes one, and that the repositories write only from the tables.
 */
describe('writes of a status or phase', () => {
  it('are made by the repositories alone, from the lifecycle tables', () => {
    const found: string[] = [];
    for (const file of sources(SRC)) {
      const code = readFileSync(file, 'utf8');
      const where = relative(SRC, file);
      const table = WRITERS[where];
      for (const call of updateCalls(code))
        if (STATE_KEY.test(call) && !table?.test(call))
          found.push(`${where}: ${call.split('\n')[0]}…`);
      if (STATE_SQL.test(code) && !table?.test(code))
        found.push(`${where}: an UPDATE ... SET status or phase`);
    }
    assert.deepEqual(found, []);
  });

  it('would be caught in a file that made one', () => {
    const call = `await manager.update(RestoreEntity, { id }, { status: 'failed' });`;
    assert.ok(updateCalls(call).some((text) => STATE_KEY.test(text)));
    assert.ok(STATE_SQL.test('`UPDATE provisioner.databases SET status = $1 WHERE id = $2`'));
  });
});
