// The e2e suite: black-box tests through the gateway of a stack started as `npm run up`
// starts it. Every suite runs in this one process, so the shared stack starts once.
import { after } from 'node:test';
import { stopSharedStack } from './support/shared-stack.js';
import './suites/http-edge.suite.js';
import './suites/edge-hardening.suite.js';
import './suites/device-flow.suite.js';
import './suites/authentication.suite.js';
import './suites/projects.suite.js';
import './suites/rate-limits.suite.js';
import './suites/partial-stack.suite.js';
import './suites/local-idp-gate.suite.js';
import './suites/github-provider.suite.js';
import './suites/openapi.suite.js';
import './suites/message-validation.suite.js';
import './suites/databases.suite.js';
import './suites/database-crashes.suite.js';
import './suites/reconcile-quarantine.suite.js';
import './suites/database-capacity.suite.js';
import './suites/backups.suite.js';
import './suites/backup-faults.suite.js';
import './suites/backup-takeover.suite.js';
import './suites/backup-under-writes.suite.js';
import './suites/backup-schedule.suite.js';
import './suites/restores.suite.js';
import './suites/restore-crashes.suite.js';
import './suites/pitr.suite.js';
import './suites/pitr-restores.suite.js';
import './suites/pitr-takeover.suite.js';
import './suites/pitr-retention.suite.js';
import './suites/cascades.suite.js';
import './suites/multi-gateway.suite.js';
import './suites/idempotency.suite.js';
import './suites/outages.suite.js';
import './suites/browser-device-flow.suite.js';
import './suites/fuzz.suite.js';
import './suites/secrets-in-logs.suite.js';

after(stopSharedStack);
