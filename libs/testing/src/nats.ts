// nats-server with JetStream on a free port; its store survives stop() and start() on the same port.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { InvalidOption } from './errors';
import { startGroup, type ServerGroup } from './group';
import { LocalServer, startOnFreePort, type ServerLaunch, type ServerProcess } from './server-process';
import { findBinary } from './system';

export interface NatsOptions {
  /** Enable JetStream with its store in the data dir (default true). */
  jetstream?: boolean;
  /** Listen on this port instead of a free one (no retry if it is taken). */
  port?: number;
  /**
   * A configuration file (nats-server `-c`), e.g. TLS and authorization; `files` are written beside
   * it (for its `include`s) and `env` is its environment (for `$VAR` references). Listen address,
   * port, server name and JetStream still come from the command line.
   */
  config?: { readonly text: string; readonly files?: Readonly<Record<string, string>>; readonly env?: Readonly<Record<string, string>> };
}

/** A nats-server; `url` is nats://127.0.0.1:<port>. destroy() ends it and deletes its files. */
export interface NatsServer extends ServerProcess {
  readonly url: string;
  readonly jetstream: boolean;
}

class NatsNode extends LocalServer implements NatsServer {
  constructor(
    launch: ServerLaunch,
    port: number,
    readonly jetstream: boolean,
    private readonly group: ServerGroup,
  ) {
    super(launch, port);
  }

  get url(): string {
    return `nats://${this.host}:${this.port}`;
  }

  override destroy(): Promise<void> {
    return this.group.destroy();
  }
}

/** The INFO line a NATS server sends first on every connection. */
function readInfo(host: string, port: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let text = '';
    socket.setTimeout(3_000, () => socket.destroy(new Error('no INFO within 3 s')));
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\r\n');
      if (end < 0) return;
      socket.destroy();
      if (!text.startsWith('INFO ')) reject(new Error(`unexpected greeting ${text.slice(0, 40)}`));
      else resolve(JSON.parse(text.slice(5, end)) as Record<string, unknown>);
    });
    socket.on('close', () => reject(new Error('closed before INFO')));
  });
}

/** Starts a nats-server (JetStream on by default) in a fresh directory. */
export async function startNats(options: NatsOptions = {}): Promise<NatsServer> {
  const jetstream = options.jetstream ?? true;
  const fixedPort = options.port;
  if (fixedPort !== undefined && !(Number.isInteger(fixedPort) && fixedPort > 0 && fixedPort < 65_536)) {
    throw InvalidOption('port', `expected a TCP port, got ${fixedPort}`);
  }
  return startGroup('nats', async (group) => {
    const dir = await group.memberDir('nats');
    const dataDir = await group.memberDir(join('nats', 'data'));
    const serverName = `dbproxy-test-${randomBytes(6).toString('hex')}`;
    const config = options.config;
    if (config) {
      for (const [name, text] of Object.entries({ ...config.files, 'nats.conf': config.text })) writeFileSync(join(dir, name), text);
    }
    const launch: ServerLaunch = {
      name: 'nats-server',
      dir,
      dataDir,
      command: findBinary('nats-server'),
      ...(config?.env ? { env: config.env } : {}),
      args: (port) => [...(config ? ['-c', join(dir, 'nats.conf')] : []), '-a', '127.0.0.1', '-p', String(port), '-n', serverName, ...(jetstream ? ['-js', '-sd', dataDir] : [])],
      stopSignal: 'SIGINT', // graceful: flushes the JetStream store
      quickExitSignal: 'SIGKILL',
      // Ready when INFO names our server (not another process on the port) and JetStream is up.
      probe: async (server) => {
        const info = await readInfo(server.host, server.port);
        return info.server_name === serverName && (!jetstream || info.jetstream === true);
      },
    };
    const create = (port: number): NatsNode => group.track(new NatsNode(launch, port, jetstream, group));
    if (fixedPort === undefined) return startOnFreePort(create);
    const server = create(fixedPort);
    await server.start();
    return server;
  });
}
