// The e2e group "limits" (groups.ts): its suites in one process, beside the other groups.
import { runGroup } from '../support/run-group.js';

await runGroup('limits');
