// The e2e group "api" (groups.ts): its suites in one process.
import { runGroup } from '../support/run-group.js';

await runGroup('api');
