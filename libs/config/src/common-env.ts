// Decorated classes below record their types only when reflect-metadata is loaded first.
import 'reflect-metadata';
import { brokerLoginOf, parseBrokerUsers } from '@pgcloud/contracts';
import { IsIn, IsInt, IsString, IsUrl, Matches, Max, Min, ValidateBy } from 'class-validator';
import { isLoopbackAddress } from './loopback.js';

/**
 * True unless the URL logs in to a broker beyond this machine as RabbitMQ's `guest` (the
 * login amqplib uses when the URL names none): a well-known password, and every app's at
 * once, so any broker user could act as any app.
 */
export function guestOnlyOnLoopback(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return true; // not a URL: the format rule names it
  }
  return brokerLoginOf(value) !== 'guest' || isLoopbackAddress(url.hostname);
}

function brokerUsersProblem(value: string): string {
  try {
    parseBrokerUsers(value);
    return '';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Settings every pgcloud service shares: the broker, the metadata database, logging. */
export class CommonEnv {
  /** AMQP URL of RabbitMQ; its `guest` login is refused unless the broker is on loopback. */
  @Matches(/^amqps?:\/\//, { message: 'must be an amqp:// or amqps:// URL' })
  @ValidateBy({
    name: 'guestOnlyOnLoopback',
    validator: {
      validate: guestOnlyOnLoopback,
      defaultMessage: () =>
        'logs in as guest to a broker beyond this machine: give each app a broker login of its own',
    },
  })
  RABBITMQ_URL: string = 'amqp://guest:guest@127.0.0.1:5672';

  /**
   * Which app each broker login is, `login=app` pairs separated by commas: a service answers
   * a message only from the apps its pattern allows, told by the login RabbitMQ vouches
   * for (docs/architecture.md#calls-and-events). Empty: each app's login is its own name.
   */
  @ValidateBy({
    name: 'brokerUsers',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && brokerUsersProblem(value) === '',
      defaultMessage: (args) => brokerUsersProblem(String(args?.value)),
    },
  })
  BROKER_USERS: string = '';

  /** Prefix of every queue name, so several deployments can share one broker. */
  @Matches(/^[a-z0-9][a-z0-9._-]*$/, {
    message: 'must be lowercase letters, digits, dots, dashes or underscores',
  })
  RMQ_QUEUE_PREFIX: string = 'pgcloud';

  /**
   * How long a caller waits for a service's answer before SERVICE_UNAVAILABLE, in
   * milliseconds: the longest a request the gateway forwards takes, each service it reaches
   * nesting its own calls within what is left.
   */
  @IsInt()
  @Min(100)
  @Max(120_000)
  RPC_TIMEOUT_MS: number = 5000;

  /** Messages a service works on at once. */
  @IsInt()
  @Min(1)
  @Max(1000)
  RMQ_PREFETCH: number = 32;

  /** PostgreSQL URL of the metadata database; each service keeps its own schema there. */
  @Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/pgcloud';

  /**
   * Port of the management server: GET /livez, /readyz and /metrics for probes and
   * Prometheus, apart from the public API. 0 (the default) serves none, so several apps on
   * one machine need no port plan (the launcher gives each a free one); Kubernetes and
   * compose set 9090.
   */
  @IsInt()
  @Min(0)
  @Max(65535)
  MANAGEMENT_PORT: number = 0;

  /** Address the management server listens on; 0.0.0.0 in a container, for the kubelet. */
  @IsUrl(
    { require_tld: false, require_protocol: false },
    { message: 'must be a host name or address' },
  )
  MANAGEMENT_HOST: string = '127.0.0.1';

  /** The least severe level logged: it and every level more severe. */
  @IsString()
  @IsIn(['error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL: string = 'log';

  /** `json`: one object per line; `pretty`: text; `auto`: text on a terminal, JSON elsewhere. */
  @IsIn(['auto', 'json', 'pretty'])
  LOG_FORMAT: string = 'auto';
}
