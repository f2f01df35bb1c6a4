import 'reflect-metadata';
import { startService } from '@pgcloud/messaging';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';
import { loadEncryptionKey } from './credentials/encryption-key.js';
import { SecretBox } from './credentials/secret-box.js';

const config = loadConfig();
const secrets = new SecretBox(await loadEncryptionKey(config.ENCRYPTION_KEY, config.dataDir));
await startService(AppModule.forRoot(config, secrets), 'databases', config);
