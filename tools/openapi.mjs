// The gateway's OpenAPI document and the typed client made from it (libs/api-client).
//   node tools/openapi.mjs write   writes libs/api-client/openapi.json and regenerates
//                                  libs/api-client/src/generated (npm run openapi)
//   node tools/openapi.mjs check   fails when either differs from what the built gateway
//                                  gives (part of every build)
// Both read the built gateway (apps/api-gateway/dist): build first.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import config from '../libs/api-client/openapi-ts.config.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const documentPath = join(root, config.input);
const generatedPath = join(root, config.output.path);

/** The document as the gateway's controllers describe it today. */
function currentDocument() {
  return execFileSync(process.execPath, ['apps/api-gateway/dist/openapi/write-document.js'], {
    cwd: root,
    encoding: 'utf8',
  });
}

async function generate(input, output) {
  process.chdir(root);
  await createClient({ ...config, input, output: { ...config.output, path: output } });
}

/** Every file under a folder, by path relative to it, with its text. */
function filesUnder(folder) {
  const files = new Map();
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(folder, path), readFileSync(path, 'utf8'));
  }
  return files;
}

function differences(expected, actual) {
  const names = new Set([...expected.keys(), ...actual.keys()]);
  return [...names].filter((name) => expected.get(name) !== actual.get(name)).sort();
}

const mode = process.argv[2];
if (mode === 'write') {
  writeFileSync(documentPath, currentDocument());
  rmSync(generatedPath, { recursive: true, force: true });
  await generate(documentPath, generatedPath);
  console.log(`wrote ${config.input} and ${config.output.path}`);
} else if (mode === 'check') {
  const stale = `Run \`npm run openapi\` and commit libs/api-client with the change.`;
  if (currentDocument() !== readFileSync(documentPath, 'utf8')) {
    console.error(`The gateway's OpenAPI document differs from ${config.input}. ${stale}`);
    process.exit(1);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'pgcloud-openapi-'));
  try {
    await generate(documentPath, scratch);
    const changed = differences(filesUnder(scratch), filesUnder(generatedPath));
    if (changed.length > 0) {
      console.error(
        `${config.output.path} is not what ${config.input} generates (${changed.join(', ')}). ${stale}`,
      );
      process.exit(1);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
} else {
  console.error('usage: node tools/openapi.mjs write|check');
  process.exit(2);
}
