// The e2e group "daemon" (groups.ts): its suites in one process.
import { runGroup } from '../support/run-group.js';

await runGroup('daemon');
