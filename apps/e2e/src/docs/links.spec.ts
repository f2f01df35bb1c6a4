import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { WORKSPACE_ROOT } from '@pgcloud/testing';

/** Files under `dir` (node_modules, dist and hidden folders left out) whose names match. */
function filesUnder(dir: string, name: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist'].includes(entry.name) || entry.name.startsWith('.')
        ? []
        : filesUnder(path, name);
    return name.test(entry.name) ? [path] : [];
  });
}

/** The anchors a Markdown file's headings make, as GitHub spells them. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6}\s+(.*?)\s*#*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let unique = slug;
    for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

/** Why a link to `target` (a path, perhaps with `#anchor`) from `from` does not resolve. */
function brokenLink(base: string, target: string, from: string): string | undefined {
  const [path = '', anchor] = target.split('#');
  const file = path === '' ? from : resolve(base, path);
  if (!existsSync(file)) return `${target}: no such file`;
  if (anchor === undefined || statSync(file).isDirectory() || !file.endsWith('.md'))
    return undefined;
  return anchorsOf(file).has(anchor) ? undefined : `${target}: no heading #${anchor}`;
}

const MARKDOWN = [
  join(WORKSPACE_ROOT, 'README.md'),
  ...filesUnder(join(WORKSPACE_ROOT, 'docs'), /\.md$/),
];
const SOURCES = ['apps', 'libs', 'tools', 'bench'].flatMap((dir) =>
  filesUnder(join(WORKSPACE_ROOT, dir), /\.(ts|mjs)$/),
);

describe('links into the docs', () => {
  it('from the README and docs/ resolve, anchors included', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      let fenced = false;
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line.startsWith('```')) fenced = !fenced;
        if (fenced) continue;
        for (const [, target = ''] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
          const problem = brokenLink(dirname(file), target, file);
          if (problem) broken.push(`${relative(WORKSPACE_ROOT, file)}: ${problem}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('from code comments resolve, anchors included', () => {
    const broken: string[] = [];
    for (const file of SOURCES) {
      for (const [target = ''] of readFileSync(file, 'utf8').matchAll(
        /(?<![\w/.])docs\/[\w./-]+\.md(?:#[\w-]+)?/g,
      )) {
        const problem = brokenLink(WORKSPACE_ROOT, target, file);
        if (problem) broken.push(`${relative(WORKSPACE_ROOT, file)}: ${problem}`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
