// What the generated pages of docs/ share (configuration.md, cli.md): formatting as
// prettier --check wants it, the differences by heading, and the write|check command.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';

const root = fileURLToPath(new URL('..', import.meta.url));

/** `markdown` formatted for the page at `page` (relative to the workspace). */
export async function formatPage(page, markdown) {
  const file = join(root, page);
  const options = { ...(await prettier.resolveConfig(file)), filepath: file };
  // Paragraphs wrapped as the other pages are, then the repository's own settings.
  const wrapped = await prettier.format(markdown, {
    ...options,
    proseWrap: 'always',
    printWidth: 90,
  });
  return prettier.format(wrapped, options);
}

/**
 * What differs between a page as made and as found, one line per part (`partsOf` splits a
 * page into its parts by heading); `stranger` names a part that only the found page has.
 */
export function differencesByPart(expected, actual, partsOf, stranger) {
  const [made, found] = [partsOf(expected), partsOf(actual)];
  const differences = [];
  for (const [key, text] of made)
    if (!found.has(key)) differences.push(`missing: ${key}`);
    else if (found.get(key) !== text) differences.push(`differs: ${key}`);
  for (const key of found.keys()) if (!made.has(key)) differences.push(`${stranger}: ${key}`);
  if (differences.length === 0 && expected !== actual) differences.push('differs: the order');
  return differences;
}

/**
 * `node tools/<tool>.mjs write|check` when `moduleUrl` is the script run: writes the page,
 * or exits 1 naming what differs and how to make it anew (`remedy`).
 */
export async function pageCommand(moduleUrl, { page, render, differences, source, remedy }) {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const mode = process.argv[2];
  const path = join(root, page);
  if (mode === 'write') {
    writeFileSync(path, await render());
    console.log(`wrote ${page}`);
  } else if (mode === 'check') {
    const found = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const problems = differences(await render(), found);
    if (problems.length > 0) {
      console.error(`${page} is not what ${source} make:\n  ${problems.join('\n  ')}\n${remedy}`);
      process.exit(1);
    }
  } else {
    console.error(`usage: node ${fileURLToPath(moduleUrl).slice(root.length)} write|check`);
    process.exit(2);
  }
}
