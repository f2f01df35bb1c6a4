import type { Provider } from '@nestjs/common';
import type { ProvisionerConfig } from '../config.js';
import { DatabaseDriver } from './database-driver.js';
import { kubernetesProviders } from './kubernetes-wiring/kubernetes-providers.js';
import { LocalDriver } from './local/local.driver.js';
import { LocalDriverReadiness } from './local/local-driver.readiness.js';

/** The DatabaseDriver that DATABASE_DRIVER selects, with its readiness check. */
export function driverProviders(config: ProvisionerConfig): Provider[] {
  if (config.DATABASE_DRIVER === 'kubernetes') return kubernetesProviders(config);
  return [
    {
      provide: DatabaseDriver,
      useFactory: () =>
        new LocalDriver({
          pgBinDir: config.pgBinDir,
          osUser: config.PG_OS_USER,
          dataDir: config.dataDir,
          host: config.DATABASE_HOST,
          listenAddress: config.DATABASE_LISTEN_ADDRESS,
        }),
    },
    {
      provide: LocalDriverReadiness,
      useFactory: () =>
        new LocalDriverReadiness({ pgBinDir: config.pgBinDir, dataDir: config.dataDir }),
    },
  ];
}
