import type { AppName } from './context.js';
import { APP_NAMES } from './context.js';

/**
 * Reads BROKER_USERS, `login=app` pairs separated by commas, into the app of each broker
 * login. Unset or empty, each app's login is its own name (as the deployments create
 * them). Throws, naming the pair, on a pair that is not `login=app` or names no app.
 */
export function parseBrokerUsers(value: string | undefined): ReadonlyMap<string, AppName> {
  const trimmed = (value ?? '').trim();
  if (trimmed === '') return new Map(APP_NAMES.map((app) => [app, app]));
  const users = new Map<string, AppName>();
  for (const pair of trimmed.split(',')) {
    const [login = '', app = '', ...rest] = pair.split('=').map((part) => part.trim());
    if (login === '' || rest.length > 0 || !isAppName(app))
      throw new Error(`"${pair.trim()}" is not login=app with app one of ${APP_NAMES.join(', ')}`);
    users.set(login, app);
  }
  return users;
}

function isAppName(value: string): value is AppName {
  return (APP_NAMES as readonly string[]).includes(value);
}

/** The login a broker URL signs in with: its user name, or RabbitMQ's `guest` when none. */
export function brokerLoginOf(url: string): string {
  let username = '';
  try {
    username = new URL(url).username;
  } catch {
    return 'guest';
  }
  return username === '' ? 'guest' : decodeURIComponent(username);
}
