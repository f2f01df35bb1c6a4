import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// The sources, beside the compiled spec: dist/ mirrors src/.
const SRC = fileURLToPath(new URL('../src', import.meta.url));
/** The one file that writes a status: BackupsRepository.move, through the lifecycle's table. */
const WRITER = 'backups.repository.ts';

/** backup-service's sources that may not write a status: all but the repository. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sources(path);
    const test = /\.(spec|int-spec|fixture|testing)\.ts$/.test(entry.name);
    return entry.name.endsWith('.ts') && !test && entry.name !== WRITER ? [path] : [];
  });
}

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

/** The top-level arguments of a call's text, `.update(a, b, c)` giving a, b and c. */
function callArguments(call: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = call.indexOf('(') + 1;
  for (let at = start; at < call.length; at++) {
    const char = call[at] ?? '';
    if ('([{'.includes(char)) depth++;
    else if (')]}'.includes(char) && depth-- === 0) {
      args.push(call.slice(start, at));
      break;
    } else if (char === ',' && depth === 0) {
      args.push(call.slice(start, at));
      start = at + 1;
    }
  }
  return args.map((arg) => arg.trim()).filter((arg) => arg !== '');
}

const STATE_KEY = /\b(status|phase)\s*:/;
const STATE_SQL = /\bUPDATE\b[^`]*\bSET\b[^`]*\b(status|phase)\s*=/i;
/** A status written as the lifecycle's table has it: `status: BACKUP_MOVES[move].to`. */
const FROM_TABLE = /^status\s*:\s*BACKUP_MOVES\[\w+\]\.to$/;

/**
 * The `.update(` calls of `code` whose values (the last argument: update(entity, where,
 * values)) name a status not taken from BACKUP_MOVES; and each that does take it from there.
 */
function statusWrites(code: string): { fromTable: string[]; other: string[] } {
  const fromTable: string[] = [];
  const other: string[] = [];
  for (const call of updateCalls(code)) {
    if (!STATE_KEY.test(call)) continue;
    const values = callArguments(call).at(-1) ?? '';
    const written = values.match(/\b(status|phase)\s*:[^,}]*/g) ?? [];
    const line = call.split('\n')[0] ?? call;
    if (written.length > 0 && written.every((pair) => FROM_TABLE.test(pair.trim())))
      fromTable.push(line);
    else if (written.length > 0) other.push(`${line}…`);
  }
  return { fromTable, other };
}

/**
 * Every write of a backup's status goes through BackupsRepository.move
 * (backups/backups.repository.ts), which refuses a move the lifecycle's table
 * (backups/backup-lifecycle.ts) does not hold. This proves no other file writes one, and
 * that the repository writes none but the table's.
 */
describe('writes of a status', () => {
  it('are made by the repository alone', () => {
    const found: string[] = [];
    for (const file of sources(SRC)) {
      const code = readFileSync(file, 'utf8');
      const where = relative(SRC, file);
      for (const call of updateCalls(code))
        if (STATE_KEY.test(call)) found.push(`${where}: ${call.split('\n')[0]}…`);
      if (STATE_SQL.test(code)) found.push(`${where}: an UPDATE ... SET status or phase`);
    }
    assert.deepEqual(found, []);
  });

  it('are, in the repository, the status BACKUP_MOVES holds', () => {
    const code = readFileSync(join(SRC, 'backups', WRITER), 'utf8');
    const { fromTable, other } = statusWrites(code);
    assert.deepEqual(other, []);
    assert.ok(fromTable.length > 0, `${WRITER} writes a status through BACKUP_MOVES`);
    assert.ok(!STATE_SQL.test(code), `${WRITER} has no UPDATE ... SET status or phase`);
  });

  it('would be caught in a file that made one', () => {
    const call = `await manager.update(BackupEntity, { id }, { status: 'failed' });`;
    assert.ok(updateCalls(call).some((text) => STATE_KEY.test(text)));
    assert.ok(STATE_SQL.test('`UPDATE backups.backups SET status = $1 WHERE id = $2`'));
  });

  it('would be caught in the repository when not taken from BACKUP_MOVES', () => {
    const table = `await tx.update(
      BackupEntity,
      { id: backupId, status: In([...from]) },
      { status: BACKUP_MOVES[move].to, ...fields },
    );`;
    assert.deepEqual(statusWrites(table).other, []);
    assert.equal(statusWrites(table).fromTable.length, 1);
    for (const values of [
      `{ status: 'failed' }`,
      `{ status: BACKUP_MOVES[move].to, error, status: 'failed' }`,
      `{ ...fields, phase: 'done' }`,
    ]) {
      const call = `await tx.update(BackupEntity, { id, status: In(from) }, ${values});`;
      assert.equal(statusWrites(call).other.length, 1, values);
    }
  });
});
