import { after } from 'node:test';
import { stopSharedStack } from './support/shared-stack.js';
import './suites/kubernetes-driver.suite.js';
import './suites/idempotency.suite.js';
after(() => stopSharedStack());
