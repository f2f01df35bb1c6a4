import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { applySocketTimeouts, hostCheck, requestIdMiddleware } from '@pgcloud/http';
import { createLogger } from '@pgcloud/observability';
import { AccessToken } from './access/access-token.js';
import { AppModule } from './app.module.js';
import type { DaemonConfig } from './config.js';
import { ensureSecretFile, loadSocketTimeouts } from '@pgcloud/config';
import { ManagedServer, openServerAccess } from './server/managed-server.js';
import { PullPlace } from './pulls/archive-pulls.js';
import { join } from 'node:path';
import { resolveOsUser } from '@pgcloud/postgres';

/**
 * The daemon listens on loopback only (docs/api/local-daemon.md); there is no setting for
 * it.
 */
export const DAEMON_HOST = '127.0.0.1';

/**
 * Starts the daemon: its token, its server (the embedded one is made and started
 * here), then the HTTP API on 127.0.0.1. SIGTERM and SIGINT close the API, the daemon's
 * sessions and the embedded server, in that order.
 */
export async function startDaemon(config: DaemonConfig): Promise<INestApplication> {
  const logger = new Logger('LocalDaemon');
  const token = await ensureSecretFile(config.tokenFile, {
    prefix: 'pgcd_',
    setting: 'DAEMON_TOKEN_FILE',
  });
  const access = await openServerAccess(config);
  const server = new ManagedServer(access, config.DAEMON_CATALOG_DATABASE);
  let app: NestExpressApplication | undefined;
  try {
    app = await NestFactory.create<NestExpressApplication>(
      AppModule.forRoot(
        server,
        new AccessToken(token),
        config.DAEMON_EXPIRY_SWEEP_SECONDS,
        new PullPlace(join(config.dataDir, 'pulls'), {
          binDir: config.pgBinDir,
          osUser: await resolveOsUser(config.PG_OS_USER),
        }),
      ),
      { bodyParser: false, abortOnError: false, logger: createLogger('local-daemon', config) },
    );
    // Request ids first, so even a refused Host gets one; then the Host, before routing.
    app.use(requestIdMiddleware);
    app.use(
      hostCheck([], 'The local daemon answers only requests for localhost, 127.0.0.1 or [::1].'),
    );
    app.disable('x-powered-by');
    app.enableShutdownHooks();
    applySocketTimeouts(app.getHttpServer(), loadSocketTimeouts());
    await app.listen(config.DAEMON_PORT, DAEMON_HOST);
  } catch (err) {
    if (app) await app.close().catch(() => undefined);
    else await server.onApplicationShutdown();
    throw err;
  }
  logger.log(`managing databases on ${server.description}`);
  logger.log(
    `listening on http://${DAEMON_HOST}:${config.DAEMON_PORT}; token in ${config.tokenFile}`,
  );
  return app;
}
