import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SOURCES = fileURLToPath(new URL('../src', import.meta.url));
/** Libraries whose index loads the services' configuration and validators: ~0.8 s at start. */
const HEAVY = ['@pgcloud/config', '@pgcloud/contracts', '@pgcloud/http', '@pgcloud/messaging'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.includes('.spec.') ? [path] : [];
  });
}

describe('the CLI at start', () => {
  it("loads no service library's index: types only, or a light entry point", () => {
    const heavy: string[] = [];
    for (const file of sources(SOURCES)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/^(import|export)(?! type)[^;]*? from '([^']+)';/gms))
        if (HEAVY.includes(match[2] ?? '')) heavy.push(`${file}: ${match[2]}`);
    }
    assert.deepEqual(heavy, []);
  });
});
