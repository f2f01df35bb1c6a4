import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { ApiError } from '@pgcloud/api-client';
import { Output, renderFields, renderTable } from './output.js';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString() };
}

describe('Output', () => {
  it('renders aligned tables and field lists, "-" for what is absent', () => {
    const table = renderTable(
      [
        { id: 'proj_1', name: 'shop', region: undefined },
        { id: 'proj_22', name: 'b', region: 'eu' },
      ],
      [
        { header: 'id', value: (row) => row.id },
        { header: 'name', value: (row) => row.name },
        { header: 'region', value: (row) => row.region },
      ],
    );
    assert.equal(table, 'ID       NAME  REGION\nproj_1   shop  -\nproj_22  b     eu');
    assert.equal(renderTable([], []), '(none)');
    assert.equal(
      renderFields([
        ['id', 'x'],
        ['databases', 0],
      ]),
      'id:        x\ndatabases: 0',
    );
  });

  it('prints the data as JSON with --json, the short form with --quiet, else the readable form', () => {
    for (const [mode, expected] of [
      [{ json: true }, '{\n  "id": "a"\n}\n'],
      [{ quiet: true }, 'a\n'],
      [{}, 'readable\n'],
    ] as const) {
      const stdout = capture();
      new Output(mode, stdout.stream, capture().stream).result(
        { id: 'a' },
        () => 'readable',
        () => 'a',
      );
      assert.equal(stdout.text(), expected);
    }
  });

  it("shows an API error's code, message and request id, as JSON on stderr with --json", () => {
    const error = new ApiError(409, 'PROJECT_NAME_TAKEN', 'taken', 'req_1');
    const plain = capture();
    new Output({}, capture().stream, plain.stream).error(error);
    assert.equal(plain.text(), 'error: taken (code PROJECT_NAME_TAKEN, request id req_1)\n');
    const json = capture();
    new Output({ json: true }, capture().stream, json.stream).error(error);
    assert.deepEqual(JSON.parse(json.text()), {
      code: 'PROJECT_NAME_TAKEN',
      message: 'taken',
      request_id: 'req_1',
    });
  });
});
