// Redis primary with replicas (REPLICAOF), and the node launcher the Redis Cluster builder shares.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { InvalidOption, ReplicationFailed } from './errors';
import { replicatedServers, settleAll, startGroup, type ReplicatedServers, type ServerGroup } from './group';
import { LocalServer, startOnFreePort, type ServerLaunch, type ServerProcess } from './server-process';
import { findBinary } from './system';
import { waitFor } from './wait';

export interface RedisOptions {
  /** Number of replicas (default 1). */
  replicas?: number;
  /** Sets requirepass on every server (and masterauth, so replicas can sync). */
  password?: string;
  /** The primary also listens with TLS on `port` (the plaintext port stays, for the harness). */
  tls?: RedisTlsListener;
}

/** A TLS listener: certificate and key files, the CA that client certificates must chain to. */
export interface RedisTlsListener {
  readonly port: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
  /** tls-auth-clients: require a client certificate (default true). */
  readonly requireClientCert?: boolean;
}

/** A Redis server on 127.0.0.1; `password` is set when the server requires AUTH. */
export interface RedisServer extends ServerProcess {
  readonly password: string | undefined;
}

export class RedisNode extends LocalServer implements RedisServer {
  constructor(
    launch: ServerLaunch,
    port: number,
    readonly password: string | undefined,
  ) {
    super(launch, port);
  }
}

/** What differs between nodes: a replica's primary, cluster mode. */
export interface RedisNodeConfig {
  password?: string;
  replicaOf?: RedisServer;
  cluster?: { nodeTimeoutMs: number };
  tls?: RedisTlsListener;
}

/** redis.conf of one node: snapshot on shutdown (so stop/start keeps data), no AOF, immediate replica sync. */
function redisConf(dataDir: string, config: RedisNodeConfig): string {
  const lines = [
    'bind 127.0.0.1',
    'protected-mode no',
    'daemonize no',
    'logfile ""',
    `dir ${dataDir}`,
    'dbfilename dump.rdb',
    'save 3600 1',
    'appendonly no',
    'repl-diskless-sync yes',
    'repl-diskless-sync-delay 0',
    'maxmemory 256mb',
  ];
  if (config.password !== undefined) lines.push(`requirepass "${config.password}"`, `masterauth "${config.password}"`);
  if (config.replicaOf) lines.push(`replicaof ${config.replicaOf.host} ${config.replicaOf.port}`);
  if (config.tls) {
    const t = config.tls;
    lines.push(`tls-port ${t.port}`, `tls-cert-file ${t.certFile}`, `tls-key-file ${t.keyFile}`, `tls-ca-cert-file ${t.caFile}`, `tls-auth-clients ${t.requireClientCert === false ? 'no' : 'yes'}`);
  }
  if (config.cluster) {
    lines.push('cluster-enabled yes', 'cluster-config-file nodes.conf', `cluster-node-timeout ${config.cluster.nodeTimeoutMs}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Where and how to reach a Redis server. */
type RedisAddress = Pick<RedisServer, 'host' | 'port' | 'password'>;

/** Runs `work` with a client that neither retries nor queues, so a down server fails fast. */
export async function withRedis<T>(server: RedisAddress, work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    host: server.host,
    port: server.port,
    password: server.password,
    lazyConnect: true,
    enableReadyCheck: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 3_000,
    disconnectTimeout: 100, // ioredis otherwise keeps a 2 s timer after a refused connection
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}

/** One INFO section as key/value pairs. */
export async function redisInfo(server: RedisAddress, section: string): Promise<Record<string, string>> {
  const text = await withRedis(server, (client) => client.info(section));
  const entries = text.split('\r\n').flatMap((line) => {
    const at = line.indexOf(':');
    return at > 0 && !line.startsWith('#') ? [[line.slice(0, at), line.slice(at + 1)] as const] : [];
  });
  return Object.fromEntries(entries);
}

/** Starts one redis-server in its own directory of `group`. */
export async function startRedisNode<S extends RedisNode>(
  group: ServerGroup,
  name: string,
  config: RedisNodeConfig,
  create: (launch: ServerLaunch, port: number) => S,
  pickPort?: () => Promise<number>,
): Promise<S> {
  const dir = await group.memberDir(name);
  const dataDir = await group.memberDir(join(name, 'data'));
  const confFile = join(dir, 'redis.conf');
  await writeFile(confFile, redisConf(dataDir, config));
  const launch: ServerLaunch = {
    name: `${config.cluster ? 'redis-cluster' : 'redis'} ${name}`,
    dir,
    dataDir,
    command: findBinary('redis-server'),
    args: (port) => [confFile, '--port', String(port)],
    stopSignal: 'SIGTERM', // saves dump.rdb (a save point is configured), then exits
    quickExitSignal: 'SIGKILL',
    // Ready when it answers PING (not LOADING) and INFO names our process (not someone else's server).
    probe: (server) =>
      withRedis({ host: server.host, port: server.port, password: config.password }, async (client) => {
        await client.ping();
        return (await client.info('server')).includes(`\r\nprocess_id:${server.pid}\r\n`);
      }),
  };
  return group.track(await startOnFreePort((port) => create(launch, port), pickPort));
}

/** Waits until the replica's link to its primary is up. */
export async function awaitReplicaLink(replica: RedisNode, timeoutMs = 30_000): Promise<void> {
  const linked = async (): Promise<boolean> => (await redisInfo(replica, 'replication')).master_link_status === 'up';
  await waitFor(linked, { timeoutMs, description: `${replica.name} link up` }).catch((err) => {
    throw ReplicationFailed.withCause(err, replica.name, 'master_link_status is not up', replica.logFile, replica.logTail());
  });
}

/** Waits until each replica has processed the primary's current replication offset. */
async function catchUp(primary: RedisNode, replicas: readonly RedisNode[], timeoutMs: number): Promise<void> {
  const offset = Number((await redisInfo(primary, 'replication')).master_repl_offset);
  const waitOne = async (replica: RedisNode): Promise<void> => {
    const reached = async (): Promise<boolean> => Number((await redisInfo(replica, 'replication')).slave_repl_offset) >= offset;
    await waitFor(reached, { timeoutMs, intervalMs: 20 }).catch((err) => {
      const reason = `not at offset ${offset} after ${timeoutMs} ms`;
      throw ReplicationFailed.withCause(err, replica.name, reason, replica.logFile, replica.logTail());
    });
  };
  await settleAll(replicas.map(waitOne));
}

/** A password goes into redis.conf quoted, so it may not contain quotes, backslashes or spaces. */
export function checkPassword(password: string | undefined): string | undefined {
  if (password !== undefined && !/^[^\s"'\\]+$/.test(password)) {
    throw InvalidOption('password', 'must be non-empty without spaces, quotes or backslashes');
  }
  return password;
}

/** Starts a Redis primary and `replicas` replicas (REPLICAOF), optionally with a password. */
export async function startRedis(options: RedisOptions = {}): Promise<ReplicatedServers<RedisServer>> {
  const replicaCount = options.replicas ?? 1;
  if (!Number.isInteger(replicaCount) || replicaCount < 0) throw InvalidOption('replicas', `expected an integer >= 0, got ${replicaCount}`);
  const password = checkPassword(options.password);
  return startGroup('redis', async (group) => {
    const create = (launch: ServerLaunch, port: number): RedisNode => new RedisNode(launch, port, password);
    const primary = await startRedisNode(group, 'primary', { password, ...(options.tls ? { tls: options.tls } : {}) }, create);
    const names = Array.from({ length: replicaCount }, (_, i) => `replica${i + 1}`);
    const replicas = await settleAll(
      names.map(async (name) => {
        const replica = await startRedisNode(group, name, { password, replicaOf: primary }, create);
        await awaitReplicaLink(replica);
        return replica;
      }),
    );
    return replicatedServers(group, primary, replicas, (running, timeoutMs) => catchUp(primary, running, timeoutMs));
  });
}
