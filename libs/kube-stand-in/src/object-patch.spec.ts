import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiStatusError } from './api-status.js';
import { applyPatch, sameJson } from './object-patch.js';

const statusCode = (patch: () => unknown) =>
  assert.throws(
    patch,
    (err: unknown) => err instanceof ApiStatusError && [400, 422].includes(err.code),
  );

describe('applyPatch', () => {
  const target = { spec: { roles: ['a', 'b'], params: { x: '1', y: '2' } }, 'a/b~c': 1 };

  it('merge patch: maps merge, null removes, lists are replaced; the target is not changed', () => {
    const patched = applyPatch(
      target,
      { spec: { roles: ['c'], params: { x: null, z: '3' } } },
      'merge',
    );
    assert.deepEqual(patched, { spec: { roles: ['c'], params: { y: '2', z: '3' } }, 'a/b~c': 1 });
    assert.deepEqual(target.spec.params, { x: '1', y: '2' });
  });

  it('strategic merge: served as a merge, its directives refused', () => {
    assert.deepEqual(applyPatch({ a: [1, 2] }, { a: [3] }, 'strategic'), { a: [3] });
    statusCode(() => applyPatch(target, { spec: { $patch: 'replace' } }, 'strategic'));
  });

  it('JSON patch: add (index and -), remove, replace, move, copy, test, escaped pointers', () => {
    const patched = applyPatch(
      target,
      [
        { op: 'add', path: '/spec/roles/1', value: 'between' },
        { op: 'add', path: '/spec/roles/-', value: 'last' },
        { op: 'remove', path: '/spec/roles/0' },
        { op: 'replace', path: '/spec/params/x', value: '9' },
        { op: 'move', from: '/spec/params/y', path: '/spec/moved' },
        { op: 'copy', from: '/spec/moved', path: '/spec/copied' },
        { op: 'test', path: '/a~1b~0c', value: 1 },
        { op: 'remove', path: '/a~1b~0c' },
      ],
      'json',
    );
    assert.deepEqual(patched, {
      spec: { roles: ['between', 'b', 'last'], params: { x: '9' }, moved: '2', copied: '2' },
    });
    assert.deepEqual(target.spec.roles, ['a', 'b']);
  });

  it('JSON patch: a failed test, a missing path or a malformed patch is refused', () => {
    statusCode(() =>
      applyPatch(target, [{ op: 'test', path: '/spec/params/x', value: '2' }], 'json'),
    );
    statusCode(() => applyPatch(target, [{ op: 'remove', path: '/spec/nothing' }], 'json'));
    statusCode(() =>
      applyPatch(target, [{ op: 'replace', path: '/spec/roles/5', value: 1 }], 'json'),
    );
    statusCode(() => applyPatch(target, { op: 'add' }, 'json'));
    statusCode(() => applyPatch(target, [{ op: 'add', path: 'spec' }], 'json'));
  });

  it('sameJson ignores key order only', () => {
    assert.ok(sameJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
    assert.ok(!sameJson({ a: [1, 2] }, { a: [2, 1] }));
  });
});
