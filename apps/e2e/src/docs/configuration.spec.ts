import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { WORKSPACE_ROOT } from '@pgcloud/testing';

/** A variable of a config class, as tools/configuration-doc.mjs reads it. */
interface Variable {
  name: string;
  className: string;
  /** The apps that read it from this class. */
  apps: string[];
  /** Its JSDoc comment, or ''. */
  doc: string;
  /** Its default as the environment would give it; undefined when it has none. */
  default?: string;
}

/** What this spec uses of tools/configuration-doc.mjs, a script typed loosely here. */
interface ConfigurationDoc {
  PAGE: string;
  configuration(): { variables: Variable[] };
  renderPage(): Promise<string>;
  pageDifferences(expected: string, actual: string): string[];
}

const tool = (await import(
  pathToFileURL(join(WORKSPACE_ROOT, 'tools', 'configuration-doc.mjs')).href
)) as ConfigurationDoc;
const { variables } = tool.configuration();
const classNames = new Set(variables.map((variable) => variable.name));

// The system's own variables, which the local daemon reads for its defaults: .env.example
// only mentions them, since a container of the image gets every setting it names
// (libs/devstack/src/container-app.ts, which reads names as SETTING does).
const SYSTEM = ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME'];
const SETTING = /^(?:# ?)?([A-Z][A-Z0-9_]+)=/gm;
const SET = /^([A-Z][A-Z0-9_]+)=(.*)$/gm;

const defaultOf = (variable: Variable): string =>
  `${variable.className} defaults to ${variable.default ?? 'nothing'}`;

const example = readFileSync(join(WORKSPACE_ROOT, '.env.example'), 'utf8');
const exampleNames = new Set([...example.matchAll(SETTING)].map((match) => match[1] ?? ''));

describe('docs/configuration.md and .env.example', () => {
  it('the page is what the config classes make', async () => {
    const path = join(WORKSPACE_ROOT, tool.PAGE);
    const found = existsSync(path) ? readFileSync(path, 'utf8') : '';
    assert.deepEqual(
      tool.pageDifferences(await tool.renderPage(), found),
      [],
      `${tool.PAGE} is not what the config classes make: run \`npm run docs:config\``,
    );
  });

  it('every variable a class reads has a comment', () => {
    const bare = variables
      .filter((variable) => variable.doc === '')
      .map((variable) => `${variable.className}.${variable.name}`);
    assert.deepEqual(bare, [], `add a JSDoc comment to ${bare.join(', ')}`);
  });

  it('.env.example names every variable a class reads, as NAME= or # NAME=', () => {
    const missing = [...classNames].filter(
      (name) => !SYSTEM.includes(name) && !exampleNames.has(name),
    );
    assert.deepEqual(missing, [], `.env.example misses ${missing.join(', ')}`);
    const system = SYSTEM.filter(
      (name) => !classNames.has(name) || exampleNames.has(name) || !example.includes(name),
    );
    assert.deepEqual(system, [], `${system.join(', ')}: read by a class, named in prose only`);
  });

  it('.env.example names no variable that no class reads', () => {
    const unread = [...exampleNames].filter((name) => !classNames.has(name));
    assert.deepEqual(unread, [], `no config class reads ${unread.join(', ')}`);
  });

  it('.env.example sets each variable once, to its default', () => {
    const problems: string[] = [];
    const set = new Set<string>();
    for (const [, name = '', value] of example.matchAll(SET)) {
      if (set.has(name)) problems.push(`${name} is set twice`);
      set.add(name);
      const others = variables.filter(
        (variable) => variable.name === name && variable.default !== value,
      );
      if (others.length > 0)
        problems.push(`${name}=${value}, but ${others.map(defaultOf).join(', ')}`);
    }
    assert.deepEqual(problems, []);
  });

  it('a variable several classes read has one default', () => {
    const split = [...classNames]
      .map((name) => variables.filter((variable) => variable.name === name))
      .filter((declared) => new Set(declared.map((variable) => variable.default)).size > 1)
      .map((declared) => `${declared[0]?.name}: ${declared.map(defaultOf).join(', ')}`);
    assert.deepEqual(split, []);
  });
});
