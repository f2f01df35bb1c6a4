import { Injectable, Logger } from '@nestjs/common';
import type {
  DeviceAuthorization,
  DeviceTokenResult,
  DeviceVerifyResult,
  RequestContext,
} from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { AuthServiceConfig } from '../config.js';
import type { DeviceFlow } from '../device/device-flow.js';
import { TokensService } from '../tokens/tokens.service.js';
import { UsersService, toUser } from '../users/users.service.js';
import { refusalError } from './github-answers.js';
import { GithubApi, GithubUnavailable } from './github-api.js';

/**
 * The device flow proxied to GitHub's: user_code, expires_in and interval are GitHub's; an
 * approved poll signs the GitHub user in and issues our token.
 */
@Injectable()
export class GithubDeviceFlowService implements DeviceFlow {
  private readonly logger = new Logger(GithubDeviceFlowService.name);
  /** Where GitHub last told people to enter their code, for the local /device page. */
  private verificationUri: string;

  constructor(
    private readonly github: GithubApi,
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly config: AuthServiceConfig,
  ) {
    this.verificationUri = `${config.GITHUB_BASE_URL.replace(/\/+$/, '')}/login/device`;
  }

  async start(ctx: RequestContext): Promise<DeviceAuthorization> {
    const device = await this.withGithub(ctx, (signal) => this.github.requestDeviceCode(signal));
    this.verificationUri = device.verification_uri;
    this.logger.log(`GitHub device request started`);
    return device;
  }

  poll(ctx: RequestContext, deviceCode: string): Promise<DeviceTokenResult> {
    return this.withGithub(ctx, async (signal) => {
      const answer = await this.github.exchangeDeviceCode(deviceCode, signal);
      switch (answer.status) {
        case 'pending':
          return { status: 'pending' };
        case 'slow_down':
          return { status: 'slow_down', interval: answer.interval };
        case 'refused':
          this.logger.log(`GitHub refused the device code: ${answer.error}`);
          throw refusalError(answer.error);
        case 'approved':
          return this.signIn(ctx, answer.githubToken, signal);
      }
    });
  }

  /** People approve on GitHub; the local page only tells them where. */
  verify(): Promise<DeviceVerifyResult> {
    return Promise.reject(
      new DomainError(
        'ACCESS_DENIED',
        `This deployment signs in with GitHub: enter the code your terminal shows at ${this.verificationUri}.`,
      ),
    );
  }

  private async signIn(
    ctx: RequestContext,
    githubToken: string,
    signal: AbortSignal,
  ): Promise<DeviceTokenResult> {
    const identity = await this.github.identity(githubToken, signal);
    const user = await this.users.signInExternal(
      'github',
      identity.id,
      identity.login,
      identity.email,
    );
    const accessToken = await this.tokens.issue(user.id);
    this.logger.log(`token issued to ${user.id} (GitHub user ${identity.id})`);
    return { access_token: accessToken, token_type: 'Bearer', user: toUser(user) };
  }

  /**
   * Runs the GitHub calls of one request under one deadline, shorter than the caller's
   * wait: a slow GitHub then ends in our clear 503, not in a token issued after the
   * gateway gave up.
   */
  private async withGithub<T>(
    ctx: RequestContext,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    try {
      return await work(AbortSignal.timeout(Math.round(this.config.RPC_TIMEOUT_MS * 0.8)));
    } catch (err) {
      if (err instanceof GithubUnavailable) this.logger.warn(`GitHub unavailable: ${err.reason}`);
      throw err;
    }
  }
}
