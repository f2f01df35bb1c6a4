import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionDetails } from './server-access.js';

describe('connectionDetails', () => {
  it('names the login role, its password and the database in a postgresql:// URL', () => {
    const login = { host: '127.0.0.1', port: 5481, user: 'pgcloud', password: 'pw' };
    assert.deepEqual(connectionDetails(login, 'shop-dev'), {
      host: '127.0.0.1',
      port: 5481,
      database: 'shop-dev',
      user: 'pgcloud',
      password: 'pw',
      connectionString: 'postgresql://pgcloud:pw@127.0.0.1:5481/shop-dev',
    });
  });

  it('escapes what a URL cannot hold as is, and brackets IPv6 hosts', () => {
    const login = { host: '::1', port: 5432, user: 'a@b', password: 'p:w/d?#' };
    const { connectionString } = connectionDetails(login, 'My Db');
    assert.equal(connectionString, 'postgresql://a%40b:p%3Aw%2Fd%3F%23@[::1]:5432/My%20Db');
    const url = new URL(connectionString);
    assert.equal(decodeURIComponent(url.password), 'p:w/d?#');
  });
});
