import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

/** The packages a compiled module imports, following its relative imports. */
function packagesImported(entry: URL, seen = new Set<string>()): Set<string> {
  const packages = new Set<string>();
  if (seen.has(entry.href)) return packages;
  seen.add(entry.href);
  const source = readFileSync(entry, 'utf8');
  // tsc writes each import and export on one line: `import { a } from 'b';`.
  const statements = /^(?:import|export)\s(?:[^'"\n]*\sfrom\s)?['"]([^'"]+)['"]/gm;
  for (const [, specifier = ''] of source.matchAll(statements)) {
    if (specifier.startsWith('.'))
      packagesImported(new URL(specifier, entry), seen).forEach((p) => packages.add(p));
    else packages.add(specifier);
  }
  return packages;
}

describe('@pgcloud/kubernetes', () => {
  it('imports no package at runtime: ajv and kubernetes-models are only for ./validate', () => {
    assert.deepEqual([...packagesImported(new URL('./index.js', import.meta.url))], []);
    const validate = packagesImported(new URL('./validate/index.js', import.meta.url));
    assert.deepEqual([...validate].sort(), ['ajv', 'kubernetes-models']);
  });
});
