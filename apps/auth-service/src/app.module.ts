import type { DynamicModule, Provider } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { HealthController, SERVICE_NAME } from '@pgcloud/messaging';
import { metadataTypeOrmModule } from '@pgcloud/postgres';
import { AuthController } from './auth.controller.js';
import { AuthServiceConfig } from './config.js';
import { DeviceFlow } from './device/device-flow.js';
import { DeviceFlowService } from './device/device-flow.service.js';
import { DeviceRequestEntity, WrongCodeAttemptEntity } from './device/device-request.entity.js';
import { DeviceRequestsRepository } from './device/device-requests.repository.js';
import { GithubApi, HttpFetch } from './github/github-api.js';
import { GithubDeviceFlowService } from './github/github-device-flow.service.js';
import { AuthSweep } from './housekeeping/auth-sweep.js';
import { CreateAuth1763770000000 } from './migrations/1763770000000-create-auth.js';
import { SweepIndexes1764000000000 } from './migrations/1764000000000-sweep-indexes.js';
import { TokenKinds1765000000000 } from './migrations/1765000000000-token-kinds.js';
import { AccessTokenEntity } from './tokens/access-token.entity.js';
import { TokenUsage } from './tokens/token-usage.js';
import { TokensRepository } from './tokens/tokens.repository.js';
import { TokensService } from './tokens/tokens.service.js';
import { UserEntity } from './users/user.entity.js';
import { UsersRepository } from './users/users.repository.js';
import { UsersService } from './users/users.service.js';

export const AUTH_SCHEMA = 'auth';
const ENTITIES = [UserEntity, DeviceRequestEntity, WrongCodeAttemptEntity, AccessTokenEntity];

/** auth-service: users, the device flow, tokens and tiers. */
@Module({})
export class AppModule {
  static forRoot(config: AuthServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        metadataTypeOrmModule({
          databaseUrl: config.DATABASE_URL,
          schema: AUTH_SCHEMA,
          entities: ENTITIES,
          migrations: [CreateAuth1763770000000, SweepIndexes1764000000000, TokenKinds1765000000000],
        }),
      ],
      controllers: [AuthController, HealthController],
      providers: [
        { provide: AuthServiceConfig, useValue: config },
        { provide: SERVICE_NAME, useValue: 'auth-service' },
        UsersRepository,
        TokensRepository,
        DeviceRequestsRepository,
        UsersService,
        TokensService,
        TokenUsage,
        HttpFetch,
        GithubApi,
        AuthSweep,
        deviceFlowProvider(config),
      ],
    };
  }
}

/** The device flow of the configured identity provider, so the controller never branches. */
function deviceFlowProvider(config: AuthServiceConfig): Provider {
  const useClass =
    config.IDENTITY_PROVIDER === 'github' ? GithubDeviceFlowService : DeviceFlowService;
  return { provide: DeviceFlow, useClass };
}
