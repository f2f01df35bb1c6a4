import { connect } from 'node:net';

/** Resolves true when something accepts TCP connections at host:port within the timeout. */
export function canConnect(host: string, port: number, timeoutMs = 1500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

interface Dependency {
  name: string;
  url: string;
  defaultPort: number;
  startCommand: string;
}

/**
 * Checks that the servers the stack needs answer, and names each one that does not with
 * the command that starts it on a machine like ours.
 */
export async function missingPrerequisites(env: {
  DATABASE_URL: string;
  RABBITMQ_URL: string;
}): Promise<string[]> {
  const dependencies: Dependency[] = [
    {
      name: 'PostgreSQL',
      url: env.DATABASE_URL,
      defaultPort: 5432,
      startCommand: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
    },
    {
      name: 'RabbitMQ',
      url: env.RABBITMQ_URL,
      defaultPort: 5672,
      startCommand: 'rabbitmq-server -detached',
    },
  ];
  const problems: string[] = [];
  for (const dependency of dependencies) {
    const url = new URL(dependency.url);
    const port = Number(url.port || dependency.defaultPort);
    if (!(await canConnect(url.hostname, port))) {
      problems.push(
        `${dependency.name} does not answer at ${url.hostname}:${port}; start it with: ${dependency.startCommand}`,
      );
    }
  }
  return problems;
}
