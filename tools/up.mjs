// `npm run up`: installs dependencies when missing, builds, and runs the whole stack.
import { prepare } from './prepare.mjs';
import { CEPH, ensurePackages } from './system-packages.mjs';

prepare();
// The local S3 (unless S3_ENDPOINT names one) runs Ceph's daemons from Debian's packages.
if (!process.env.S3_ENDPOINT) ensurePackages(CEPH);
const { runUp } = await import('@pgcloud/devstack');
await runUp();
