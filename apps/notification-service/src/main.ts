import 'reflect-metadata';
import { startService } from '@pgcloud/messaging';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';

const config = loadConfig();
await startService(AppModule.forRoot(config), 'notifications', config);
