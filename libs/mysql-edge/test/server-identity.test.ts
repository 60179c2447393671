// The server identity the edge advertises, against real MariaDB: the greeting carries the primary's
// own version with "-dbproxy" (so mysql2 knows it talks to MariaDB and never sends the JSON parameter
// type MariaDB refuses with 1210) unless [mysql] server_version is set, and MariaDB's extended
// metadata is offered when every backend has it, so a JSON column reaches mysql2 as JSON.
import { connect } from 'node:net';
import { PacketFramer, decodeInitialHandshake, MariaDbCapability, type InitialHandshake } from '@dbproxy/protocol-mysql';
import { startMariaDb } from '@dbproxy/testing';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { applyMysqlSetting, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;

/** The first packet a server sends on a new connection, decoded (the socket then closes). */
function greeting(port: number): Promise<InitialHandshake> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const framer = new PacketFramer();
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) =>
      framer.feed(chunk, (p) => {
        resolve(decodeInitialHandshake(Buffer.from(p.payload)));
        socket.destroy();
      }),
    );
  });
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  const root = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await root.query('CREATE DATABASE idt');
  await root.query('CREATE TABLE idt.docs (id INT PRIMARY KEY, doc JSON)');
  await root.end();
  edge = await startEdge([{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' }]);
});

afterAll(async () => {
  await edge?.stop();
  await db?.destroy();
});

it("greets with the primary's own version and MariaDB's extended metadata capability", async () => {
  const direct = await greeting(db.primary.port);
  expect(direct.serverVersion).toMatch(/MariaDB/);
  const proxied = await greeting(edge.rwPort);
  expect(proxied.serverVersion).toBe(`${direct.serverVersion}-dbproxy`);
  expect(proxied.mariaDbCapabilities & MariaDbCapability.ExtendedMetadata).toBe(MariaDbCapability.ExtendedMetadata);
});

it('takes JSON parameters of mysql2 prepared statements and returns JSON columns as JSON', async () => {
  const c = await edge.connect({ database: 'idt' });
  const [[echo]] = await c.execute<RowDataPacket[]>('SELECT ? AS j', [{ a: 1 }]);
  expect(JSON.parse(String(echo?.['j']))).toEqual({ a: 1 });
  await c.execute('INSERT INTO docs VALUES (?, ?)', [1, { tags: ['x', 'y'], n: 2 }]);
  for (const run of [() => c.query<RowDataPacket[]>('SELECT doc FROM docs WHERE id = 1'), () => c.execute<RowDataPacket[]>('SELECT doc FROM docs WHERE id = ?', [1])]) {
    const [rows, fields] = await run();
    // a LONGTEXT on the wire; JSON only in MariaDB's extended metadata
    expect((fields[0] as unknown as { extendedFormat?: string }).extendedFormat).toBe('json');
    expect(rows[0]?.['doc']).toEqual({ tags: ['x', 'y'], n: 2 });
  }
  await c.end();
});

it('advertises [mysql] server_version when it is set', async () => {
  await applyMysqlSetting(edge, 'server_version', '8.0.99-custom');
  expect((await greeting(edge.rwPort)).serverVersion).toBe('8.0.99-custom');
});
