import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { SecretBox } from '@pgcloud/config';
import { SERVICE_QUEUES } from '@pgcloud/contracts';
import { startService } from '@pgcloud/messaging';
import { createLogger } from '@pgcloud/observability';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';
import { loadEncryptionKey } from './credentials/encryption-key.js';

const config = loadConfig();
// What is logged before the service starts (the encryption key's warning) in its format too.
Logger.overrideLogger(createLogger(SERVICE_QUEUES.databases, config));
const secrets = new SecretBox(await loadEncryptionKey(config.ENCRYPTION_KEY, config.dataDir));
await startService(AppModule.forRoot(config, secrets), 'databases', config);
