import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { WORKSPACE_ROOT } from '@pgcloud/testing';

/** What this spec uses of tools/cli-doc.mjs, a script typed loosely here. */
interface CliDoc {
  PAGE: string;
  renderPage(): Promise<string>;
  pageDifferences(expected: string, actual: string): string[];
}

// The script imports the built command line (apps/cli/dist), as the page shows what it does.
const tool = (await import(
  pathToFileURL(join(WORKSPACE_ROOT, 'tools', 'cli-doc.mjs')).href
)) as CliDoc;

describe('docs/cli.md', () => {
  it("is what the commands' own help makes", async () => {
    const path = join(WORKSPACE_ROOT, tool.PAGE);
    const found = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const made = await tool.renderPage();
    assert.deepEqual(
      tool.pageDifferences(made, found),
      [],
      `${tool.PAGE} is not what the commands' help makes: build, then run \`npm run docs:cli\``,
    );
    assert.equal(found, made);
  });
});
