// The e2e group "pitr" (groups.ts): its suites in one process.
import { runGroup } from '../support/run-group.js';

await runGroup('pitr');
