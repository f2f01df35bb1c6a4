#!/usr/bin/env node
// The `pgcloud` command. This file is in the repository, not built, so that npm links it
// as the workspace's bin at install time, before the build makes dist/.
try {
  await import('../dist/main.js');
} catch (error) {
  const missing =
    error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/main.js');
  if (!missing) throw error;
  process.stderr.write('pgcloud is not built yet: run `npm run build` in the checkout.\n');
  process.exitCode = 1;
}
