// `npm run daemon`: installs dependencies when missing, builds, and runs the local daemon
// alone, in this process, until Ctrl-C.
import { prepare } from './prepare.mjs';

prepare();
await import('../apps/local-daemon/dist/main.js');
