import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { loadConfig } from './config.js';
import { UsersService } from './users/users.service.js';

const USAGE = 'usage: npm run admin -- set-tier <user-id-or-login> <free|pro>';

/** The operator's command line: `set-tier` changes a user's tier. */
async function main(args: string[]): Promise<number> {
  const [command, who, tier] = args;
  if (command !== 'set-tier' || !who || (tier !== 'free' && tier !== 'pro')) {
    console.error(USAGE);
    return 2;
  }
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(loadConfig()), {
    logger: ['error'],
  });
  try {
    const user = await app.get(UsersService).setTier(who, tier);
    console.log(`${user.login} (${user.id}) is now on the ${user.tier} tier`);
    return 0;
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await app.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
