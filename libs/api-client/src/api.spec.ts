import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, ApiUnreachableError, createApi, unwrap } from './api.js';
import { getProject, listProjects } from './generated/index.js';

/** A fetch that answers one JSON body, and records the request it got. */
function answering(status: number, body: unknown, seen: Request[] = []): typeof fetch {
  return (input: RequestInfo | URL) => {
    seen.push(input as Request);
    return Promise.resolve(
      new Response(JSON.stringify(body), {
        status,
        headers: { 'content-type': 'application/json', 'x-request-id': 'req_1' },
      }),
    );
  };
}

describe('the generated client with unwrap', () => {
  it("sends the bearer token to the operation's path and answers the envelope's data", async () => {
    const seen: Request[] = [];
    const client = createApi({
      baseUrl: 'http://api.test/',
      token: 'pgc_x',
      fetch: answering(200, { success: true, data: { id: 'proj_1' } }, seen),
    });
    const project = await unwrap(getProject({ client, path: { id: 'proj_1' } }));
    assert.deepEqual(project, { id: 'proj_1' });
    assert.equal(seen[0]?.url, 'http://api.test/projects/proj_1');
    assert.equal(seen[0]?.headers.get('authorization'), 'Bearer pgc_x');
  });

  it("throws the error envelope's code, message, details and request id", async () => {
    const client = createApi({
      baseUrl: 'http://api.test',
      fetch: answering(400, {
        success: false,
        error: {
          code: 'VALIDATION_ERROR',
          message: 'bad',
          details: [{ field: 'name', message: 'too long' }],
        },
      }),
    });
    await assert.rejects(unwrap(listProjects({ client })), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.deepEqual(
        [error.status, error.code, error.message, error.requestId, error.details],
        [400, 'VALIDATION_ERROR', 'bad', 'req_1', [{ field: 'name', message: 'too long' }]],
      );
      return true;
    });
  });

  it('names an answer without an envelope by its status, and a refused connection as unreachable', async () => {
    const proxyPage = createApi({
      baseUrl: 'http://api.test',
      fetch: answering(502, 'Bad Gateway'),
    });
    await assert.rejects(unwrap(listProjects({ client: proxyPage })), { code: 'HTTP_502' });
    const refused = createApi({
      baseUrl: 'http://api.test',
      fetch: () =>
        Promise.reject(new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') })),
    });
    await assert.rejects(unwrap(listProjects({ client: refused })), (error: unknown) => {
      assert.ok(error instanceof ApiUnreachableError);
      assert.match(error.message, /cannot reach the API at http:\/\/api\.test\/projects/);
      return true;
    });
  });
});
