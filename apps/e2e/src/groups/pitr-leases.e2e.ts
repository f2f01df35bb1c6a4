// The e2e group "pitr-leases" (groups.ts): its suites in one process, beside the other groups.
import { runGroup } from '../support/run-group.js';

await runGroup('pitr-leases');
