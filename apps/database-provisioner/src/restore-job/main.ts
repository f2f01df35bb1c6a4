/*
 * The restore Job's program (one image with the provisioner): `build` makes and checks the
 * restored data (init container), `serve` serves it for the new Cluster to clone
 * (container), `drill` runs a restore drill. See restore-job/build-command.ts,
 * serve-command.ts and drill-command.ts.
 */
import { runBuild } from './build-command.js';
import { runDrill } from './drill-command.js';
import { runServe } from './serve-command.js';

const command = process.argv[2];
try {
  if (command === 'build') process.exitCode = await runBuild(process.env);
  else if (command === 'serve') process.exitCode = await runServe(process.env);
  else if (command === 'drill') process.exitCode = await runDrill(process.env);
  else {
    process.stderr.write('usage: main.js build|serve|drill\n');
    process.exitCode = 2;
  }
} catch (err) {
  process.stderr.write(
    `restore job ${command}: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exitCode = 1;
}
