import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LocalIdpGateSettings } from './local-idp-gate.js';
import { localIdpGate } from './local-idp-gate.js';

const LOOPBACK: LocalIdpGateSettings = {
  IDENTITY_PROVIDER: 'local',
  PUBLIC_BASE_URL: 'http://127.0.0.1:8080',
  GATEWAY_HOST: '127.0.0.1',
  LOCAL_IDP_INSECURE: false,
};

describe('the local identity provider gate', () => {
  it('starts quietly on loopback, whatever the loopback name', () => {
    assert.deepEqual(localIdpGate(LOOPBACK), { verdict: 'start' });
    assert.deepEqual(
      localIdpGate({
        ...LOOPBACK,
        PUBLIC_BASE_URL: 'http://localhost:8080',
        GATEWAY_HOST: 'localhost',
      }),
      { verdict: 'start' },
    );
    assert.deepEqual(
      localIdpGate({ ...LOOPBACK, PUBLIC_BASE_URL: 'http://[::1]:8080', GATEWAY_HOST: '::1' }),
      { verdict: 'start' },
    );
  });

  it('refuses a public base URL, naming LOCAL_IDP_INSECURE and the github provider', () => {
    const gate = localIdpGate({ ...LOOPBACK, PUBLIC_BASE_URL: 'https://pgcloud.example.com' });
    assert.equal(gate.verdict, 'refuse');
    assert.ok(gate.verdict === 'refuse');
    assert.match(gate.message, /LOCAL_IDP_INSECURE=true/);
    assert.match(gate.message, /IDENTITY_PROVIDER=github/);
    assert.match(gate.message, /pgcloud\.example\.com is not a loopback name/);
    assert.doesNotMatch(gate.message, /GATEWAY_HOST/);
  });

  it('refuses a gateway listening beyond loopback, even with a loopback base URL', () => {
    const gate = localIdpGate({ ...LOOPBACK, GATEWAY_HOST: '0.0.0.0' });
    assert.ok(gate.verdict === 'refuse');
    assert.match(gate.message, /GATEWAY_HOST=0\.0\.0\.0/);
    assert.match(gate.message, /LOCAL_IDP_INSECURE/);
  });

  it('starts with a warning naming both exposures when LOCAL_IDP_INSECURE=true', () => {
    const gate = localIdpGate({
      ...LOOPBACK,
      PUBLIC_BASE_URL: 'https://pgcloud.example.com',
      GATEWAY_HOST: '::',
      LOCAL_IDP_INSECURE: true,
    });
    assert.ok(gate.verdict === 'warn');
    assert.match(gate.message, /LOCAL_IDP_INSECURE=true/);
    assert.match(gate.message, /pgcloud\.example\.com/);
    assert.match(gate.message, /GATEWAY_HOST=::/);
  });

  it('leaves the github provider alone', () => {
    assert.deepEqual(
      localIdpGate({
        ...LOOPBACK,
        IDENTITY_PROVIDER: 'github',
        PUBLIC_BASE_URL: 'https://pgcloud.example.com',
        GATEWAY_HOST: '0.0.0.0',
      }),
      { verdict: 'start' },
    );
  });
});
