// RDS blue/green simulator (spec 001 "Verification"): real MariaDB servers (blue writer, green
// writer replicating from blue, readers) each reachable as its own "RDS instance" — a hostname
// answered by a test hosts map with its own loopback IP, all on one shared port (RDS pairs share
// their port) — and a mysql.rds_topology table on blue and green driven through a scenario's steps.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from './ports';
import { withMariaDb, type MariaDbServer } from './mariadb';

export const SOURCE_ROLE = 'BLUE_GREEN_DEPLOYMENT_SOURCE';
export const TARGET_ROLE = 'BLUE_GREEN_DEPLOYMENT_TARGET';

/** One simulated RDS instance endpoint: hostname → loopback IP:port forwarding to a real server. */
export interface RdsEndpoint {
  readonly hostname: string;
  readonly ip: string;
  readonly server: MariaDbServer;
  /** `hostname:port`, the address a [[mysql_backends]] entry uses. */
  readonly address: string;
}

export interface TopologyRowSpec {
  readonly endpoint: string;
  readonly role: string | null;
  readonly status: string | null;
}

class Forwarder {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly ip: string,
    readonly port: number,
    private readonly target: MariaDbServer,
  ) {}

  async open(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.ip, () => resolve());
    });
    this.server = server;
  }

  /** The instance stops answering: listener closed, every open connection cut. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

let nextIp = 2;

/** Hosts, endpoints and the topology table of one simulated deployment. */
export class RdsBgdSimulation {
  private readonly forwarders = new Map<string, Forwarder>();
  readonly endpoints = new Map<string, RdsEndpoint>();

  private constructor(
    readonly port: number,
    /** Servers that carry mysql.rds_topology (the blue and the green writer). */
    private readonly topologyServers: readonly MariaDbServer[],
  ) {}

  /** Starts one endpoint per entry (hostname → real server) on a shared fresh port. */
  static async start(endpoints: Readonly<Record<string, MariaDbServer>>, topologyServers: readonly MariaDbServer[]): Promise<RdsBgdSimulation> {
    const sim = new RdsBgdSimulation(await freePort(), topologyServers);
    for (const [hostname, server] of Object.entries(endpoints)) {
      const ip = `127.0.${Math.floor(nextIp / 250)}.${(nextIp % 250) + 2}`;
      nextIp++;
      const forwarder = new Forwarder(ip, sim.port, server);
      await forwarder.open();
      sim.forwarders.set(hostname, forwarder);
      sim.endpoints.set(hostname, { hostname, ip, server, address: `${hostname}:${sim.port}` });
    }
    await sim.createTable();
    return sim;
  }

  /** The test hosts map (`proxy.test_hosts`) answering every endpoint's hostname. */
  hosts(overrides: Readonly<Record<string, string>> = {}): Record<string, string> {
    return { ...Object.fromEntries([...this.endpoints.values()].map((e) => [e.hostname, e.ip])), ...overrides };
  }

  endpoint(hostname: string): RdsEndpoint {
    const e = this.endpoints.get(hostname);
    if (!e) throw new Error(`no simulated endpoint ${hostname}`);
    return e;
  }

  /** Takes an endpoint off the network (its IP stops answering) or brings it back. */
  async reachable(hostname: string, up: boolean): Promise<void> {
    const f = this.forwarders.get(hostname);
    if (!f) throw new Error(`no simulated endpoint ${hostname}`);
    await (up ? f.open() : f.close());
  }

  /** Every scenario step writes the same table on every topology server, outside the binlog. */
  private async onTopologyServers(sql: string[]): Promise<void> {
    await Promise.all(this.topologyServers.map((s) => withMariaDb(s, async (c) => {
      await c.query('SET SESSION sql_log_bin = 0');
      for (const statement of sql) await c.query(statement);
    })));
  }

  async createTable(): Promise<void> {
    await this.onTopologyServers([
      'DROP TABLE IF EXISTS mysql.rds_topology',
      'CREATE TABLE mysql.rds_topology (id INT PRIMARY KEY, endpoint VARCHAR(255), port INT, role VARCHAR(64), status VARCHAR(64), version VARCHAR(16)) ENGINE=InnoDB',
    ]);
  }

  /** Replaces the rows in one transaction (a poll sees the old rows or the new ones, never none). */
  async rows(rows: readonly TopologyRowSpec[]): Promise<void> {
    const esc = (v: string | null) => (v === null ? 'NULL' : `'${v.replace(/'/g, "''")}'`);
    const values = rows.map((r, i) => `(${i + 1}, ${esc(r.endpoint)}, ${this.port}, ${esc(r.role)}, ${esc(r.status)}, '1.0')`);
    await this.onTopologyServers(['CREATE TABLE IF NOT EXISTS mysql.rds_topology (id INT PRIMARY KEY, endpoint VARCHAR(255), port INT, role VARCHAR(64), status VARCHAR(64), version VARCHAR(16)) ENGINE=InnoDB', 'START TRANSACTION', 'DELETE FROM mysql.rds_topology', ...(values.length ? [`INSERT INTO mysql.rds_topology VALUES ${values.join(', ')}`] : []), 'COMMIT']);
  }

  /** Source and target rows with one status (the trace: both rows carry the same status). */
  async status(blue: string, green: string, status: string): Promise<void> {
    await this.rows([
      { endpoint: blue, role: SOURCE_ROLE, status },
      { endpoint: green, role: TARGET_ROLE, status },
    ]);
  }

  /** Writer completion: the source row disappeared, the target row says SWITCHOVER_COMPLETED. */
  async completed(green: string): Promise<void> {
    await this.rows([{ endpoint: green, role: TARGET_ROLE, status: 'SWITCHOVER_COMPLETED' }]);
  }

  /** The table drains (empty, still present). */
  async empty(): Promise<void> {
    await this.rows([]);
  }

  /** The table disappears: polls get ER_NO_SUCH_TABLE. */
  async absent(): Promise<void> {
    await this.onTopologyServers(['DROP TABLE IF EXISTS mysql.rds_topology']);
  }

  /** The metadata query fails (a column the fetch names is gone) while the table exists. */
  async queryErrors(): Promise<void> {
    await this.onTopologyServers(['ALTER TABLE mysql.rds_topology CHANGE COLUMN status status_renamed VARCHAR(64)']);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.forwarders.values()].map((f) => f.close()));
  }
}

/** The RDS switchover on the servers themselves: blue read-only, then green promoted (replication stopped, writable). */
export async function setReadOnly(server: MariaDbServer, readOnly: boolean): Promise<void> {
  await withMariaDb(server, (c) => c.query(`SET GLOBAL read_only = ${readOnly ? 1 : 0}`));
}

export async function promoteReplica(server: MariaDbServer): Promise<void> {
  await withMariaDb(server, async (c) => {
    await c.query('STOP SLAVE');
    await c.query('SET GLOBAL read_only = 0');
  });
}
