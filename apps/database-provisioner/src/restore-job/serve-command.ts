import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { BASE_ENV, resolveOsUser } from '@pgcloud/postgres';
import { jobPaths, readJobEnv, required } from './job-env.js';
import { writeServerConfig } from './job-server-config.js';
import { installTls } from './job-tls.js';

/**
 * `serve`: PostgreSQL in the foreground on the built data, for the new Cluster to clone:
 * TLS with the Secret's certificate, replication logins only, at RESTORE_PORT on every
 * address. SIGTERM (or SIGINT) asks it for a fast shutdown; answers its exit code.
 */
export async function runServe(env: NodeJS.ProcessEnv): Promise<number> {
  const jobEnv = readJobEnv(env);
  const port = Number(required(env, 'RESTORE_PORT'));
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error('RESTORE_PORT is not a port');
  const osUser = await resolveOsUser(jobEnv.osUserName);
  const paths = jobPaths(jobEnv.restoreDir);
  await installTls(jobEnv.inputDir, paths, osUser);
  const files = await writeServerConfig('serve', paths, osUser, port);
  const args = ['-D', paths.dataDir, '-c', `config_file=${files.configFile}`];
  args.push('-c', `hba_file=${files.hbaFile}`);
  const postgres = spawn(join(jobEnv.binDir, 'postgres'), args, {
    cwd: '/',
    env: BASE_ENV,
    stdio: ['ignore', 'inherit', 'inherit'],
    ...(osUser.switchUser ? { uid: osUser.uid, gid: osUser.gid } : {}),
  });
  // SIGINT is PostgreSQL's fast shutdown: sessions end, a checkpoint, exit 0.
  const fastShutdown = () => postgres.kill('SIGINT');
  process.on('SIGTERM', fastShutdown);
  process.on('SIGINT', fastShutdown);
  try {
    return await new Promise<number>((resolve, reject) => {
      postgres.once('error', (err) => reject(new Error(`postgres could not run: ${err.message}`)));
      postgres.once('exit', (code, signal) => {
        if (signal) process.stderr.write(`postgres was killed by ${signal}\n`);
        resolve(code ?? 1);
      });
    });
  } finally {
    process.off('SIGTERM', fastShutdown);
    process.off('SIGINT', fastShutdown);
  }
}
