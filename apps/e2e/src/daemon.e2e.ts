// The local daemon's e2e suite: real daemon processes, each with its own port, token file
// and data directory, driven over HTTP, and their databases reached with node-postgres.
import { after } from 'node:test';
import { stopSharedDaemon } from './support/shared-daemon.js';
import './suites/local-daemon-access.suite.js';
import './suites/local-daemon-templates.suite.js';
import './suites/local-daemon-refusals.suite.js';
import './suites/local-daemon-lifecycle.suite.js';
import './suites/local-daemon-existing-server.suite.js';
import './suites/local-daemon-secrets.suite.js';
import './suites/cli-local.suite.js';

after(stopSharedDaemon);
