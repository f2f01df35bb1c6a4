// The e2e group "faults" (groups.ts): its suites in one process.
import { runGroup } from '../support/run-group.js';

await runGroup('faults');
