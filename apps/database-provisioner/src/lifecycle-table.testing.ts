/*
 * What the lifecycle specs share: a lifecycle's table as its docs page shows it. Used by
 * *.spec.ts only.
 */
import { readFileSync } from 'node:fs';

/** A move as a row of a docs table: its name, the statuses it leaves, the one it reaches. */
export type MoveRow = [move: string, from: string, to: string];

/** The rows of a lifecycle's table: `from` as the statuses joined by ", ". */
export function rowsOf(moves: Record<string, { from: readonly string[]; to: string }>): MoveRow[] {
  return Object.entries(moves).map(([move, { from, to }]) => [move, from.join(', '), to]);
}

/** The table under the `## Its life` heading of a docs page, its cells without backquotes. */
export function docsTable(page: URL): MoveRow[] {
  const text = readFileSync(page, 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith('Its life'));
  if (!section) throw new Error(`${page.pathname} has no "Its life" section`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim().replace(/`/g, ''));
      return [cells[0] ?? '', cells[1] ?? '', cells[2] ?? ''];
    });
}
