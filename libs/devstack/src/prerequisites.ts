import { canConnect } from '@pgcloud/testing';

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
