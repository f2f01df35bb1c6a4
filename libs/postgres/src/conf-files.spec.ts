import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderConf, renderHbaRules } from './conf-files.js';

describe('postgresql.conf text', () => {
  it('writes the header, numbers bare and strings quoted', () => {
    const text = renderConf({ port: 5481, listen_addresses: "it's" }, 'Written by a test.');
    assert.equal(text, "# Written by a test.\nport = 5481\nlisten_addresses = 'it''s'\n");
  });

  it('doubles backslashes and refuses line breaks, which would add settings', () => {
    assert.match(renderConf({ data: 'a\\b' }, 'x'), /^data = 'a\\\\b'$/m);
    assert.throws(() => renderConf({ listen_addresses: "x'\nssl = off" }, 'x'));
    assert.throws(() => renderConf({ 'ssl = off\nport': 1 }, 'x'), /not a setting name/);
  });
});

describe('pg_hba.conf text', () => {
  it('aligns the columns under the header', () => {
    const text = renderHbaRules(
      [
        ['local', 'all', 'all', '', 'trust'],
        ['host', 'all', 'all', '127.0.0.1/32', 'scram-sha-256'],
      ],
      'Written by a test.',
    );
    assert.deepEqual(text.split('\n'), [
      '# Written by a test.',
      'local    all          all                                 trust',
      'host     all          all                  127.0.0.1/32   scram-sha-256',
      '',
    ]);
  });

  it('refuses a cell that would add a rule or a comment', () => {
    assert.throws(() => renderHbaRules([['host', 'all', 'all x', '::1/128', 'trust']], 'x'));
    assert.throws(() => renderHbaRules([['host', 'all', 'all', '::1/128\nlocal', 'trust']], 'x'));
    assert.throws(() => renderHbaRules([['host', 'all', 'all', '#', 'trust']], 'x'));
  });
});
