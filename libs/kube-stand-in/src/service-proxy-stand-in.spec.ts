import assert from 'node:assert/strict';
import type { Server } from 'node:net';
import { createConnection, createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freePort } from '@pgcloud/testing';
import type { StandInService } from './service-proxy-stand-in.js';
import { ServiceProxyStandIn } from './service-proxy-stand-in.js';

/** A backend that greets each connection with its name, then echoes. */
async function namedBackend(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    socket.write(`${name}\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { server, port: address.port };
}

/** Connects to `port` (of `host`) and resolves the first line it reads, or the error code. */
function firstLine(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once('data', (chunk: Buffer) => {
      resolve(chunk.toString().trim());
      socket.destroy();
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.once('close', () => resolve('closed'));
  });
}

describe('ServiceProxyStandIn: the kube-proxy and load balancer stand-in', () => {
  const proxies = new ServiceProxyStandIn();
  const backends: { server: Server; port: number }[] = [];
  let servicePort: number;
  const service = (cluster: string, port = servicePort, type = 'LoadBalancer'): StandInService => ({
    metadata: { name: 'srv-abc', namespace: 'ns' },
    spec: {
      type,
      selector: { 'cnpg.io/cluster': cluster, 'cnpg.io/instanceRole': 'primary' },
      ports: [{ name: 'postgres', port, targetPort: 5432 }],
    },
  });
  const pod = (cluster: string, port: number, phase = 'Running', role = 'primary') => ({
    labels: { 'cnpg.io/cluster': cluster, 'cnpg.io/instanceRole': role },
    phase,
    port,
  });

  before(async () => {
    for (const name of ['one', 'two', 'three']) backends.push(await namedBackend(name));
    servicePort = await freePort();
  });
  after(async () => {
    await proxies.stopAll();
    for (const { server } of backends) server.close();
  });

  const [one, two, three] = [0, 1, 2].map((i) => () => backends[i]?.port ?? 0);

  it('forwards to the first Running pod whose labels match the whole selector', async () => {
    await proxies.apply(service('g1'), [
      pod('g1', one(), 'Pending'),
      pod('g1', two(), 'Running', 'replica'),
      pod('g2', three()),
      pod('g1', three()),
    ]);
    assert.equal(await firstLine(servicePort), 'three');
  });

  it('resets connections while no pod matches', async () => {
    await proxies.apply(service('g9'), [pod('g1', one())]);
    assert.equal(proxies.targetOf(service('g9')), undefined);
    assert.equal(await firstLine(servicePort), 'ECONNRESET');
  });

  it('sends new connections to a changed selector, leaving open ones where they are', async () => {
    await proxies.apply(service('g1'), [pod('g1', one()), pod('g2', two())]);
    const open = createConnection({ host: '127.0.0.1', port: servicePort });
    const greeting = new Promise<string>((resolve) =>
      open.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
    );
    assert.equal(await greeting, 'one');
    await proxies.apply(service('g2'), [pod('g1', one()), pod('g2', two())]);
    assert.equal(await firstLine(servicePort), 'two');
    const echoed = new Promise<string>((resolve) =>
      open.once('data', (chunk: Buffer) => resolve(chunk.toString())),
    );
    open.write('still here');
    assert.equal(await echoed, 'still here');
    open.destroy();
  });

  it('moves its listener when the port changes, and stops it on remove', async () => {
    const otherPort = await freePort();
    await proxies.apply(service('g1', otherPort), [pod('g1', one())]);
    assert.equal(await firstLine(otherPort), 'one');
    assert.equal(await firstLine(servicePort), 'ECONNREFUSED');
    await proxies.remove(service('g1', otherPort));
    assert.equal(await firstLine(otherPort), 'ECONNREFUSED');
  });

  it('says which port is taken when it cannot listen', async () => {
    const taken = backends[0]?.port ?? 0;
    await assert.rejects(
      proxies.apply(service('g1', taken), [pod('g1', two())]),
      new RegExp(`cannot listen on 127.0.0.1:${taken}: EADDRINUSE`),
    );
  });

  it('answers a load balancer status for LoadBalancer Services only', () => {
    assert.deepEqual(proxies.loadBalancerStatus(service('g1')), {
      loadBalancer: { ingress: [{ ip: '127.0.0.1' }] },
    });
    assert.deepEqual(proxies.loadBalancerStatus(service('g1', servicePort, 'ClusterIP')), {
      loadBalancer: {},
    });
  });

  it('gives each ClusterIP Service an address of its own, which its DNS name resolves to', async () => {
    const clusterIp = (name: string, targetPort: number | string): StandInService => ({
      metadata: { name, namespace: 'ns' },
      spec: { type: 'ClusterIP', selector: { app: name }, ports: [{ port: 7000, targetPort }] },
    });
    // A Job pod declares its ports: the targetPort (number or name) picks the local one.
    const jobPod = (app: string, ready: boolean) => ({
      labels: { app },
      phase: 'Running',
      ready,
      port: 0,
      ports: [{ name: 'greeting', containerPort: 5432, localPort: two() }],
    });
    const first = clusterIp('first', 5432);
    const second = clusterIp('second', 'greeting');
    await proxies.apply(first, [jobPod('first', true)]);
    await proxies.apply(second, [jobPod('second', false)]);
    const [a, b] = [proxies.addressOf(first), proxies.addressOf(second)];
    assert.match(a?.host ?? '', /^127\.0\.0\.([2-9]|\d\d+)$/);
    assert.notEqual(a?.host, b?.host);
    assert.equal(proxies.resolve('first.ns.svc'), a?.host);
    assert.equal(proxies.resolve('second.ns.svc.cluster.local'), b?.host);
    assert.equal(proxies.resolve('third.ns.svc'), undefined);
    assert.equal(await firstLine(7000, a?.host), 'two');
    // Not ready: not an endpoint yet.
    assert.equal(proxies.targetOf(second), undefined);
    await proxies.apply(second, [jobPod('second', true)]);
    assert.equal(await firstLine(7000, b?.host), 'two');
    await proxies.retain([second]);
    assert.equal(proxies.resolve('first.ns.svc'), undefined);
    assert.equal(await firstLine(7000, a?.host), 'ECONNREFUSED');
  });
});
