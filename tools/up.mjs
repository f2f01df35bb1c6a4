// `npm run up`: installs dependencies when missing, builds, and runs the whole stack.
import { prepare } from './prepare.mjs';

prepare();
const { runUp } = await import('@pgcloud/testing');
await runUp();
