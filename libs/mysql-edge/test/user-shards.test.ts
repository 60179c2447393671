// users.shards without sharding rules: every statement runs on the default shard, so a user whose
// shards leave it out gets 1044 for statements on tables (and nothing reaches the server), while
// the other users are served as before.
import { startMariaDb } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: Connection;

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  direct = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await direct.query('CREATE DATABASE app');
  await direct.query("CREATE TABLE app.items (id INT PRIMARY KEY, name VARCHAR(20))");
  await direct.query("INSERT INTO app.items VALUES (1, 'one')");
  edge = await startEdge([{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' }], '', '[[users]]\nname = "elsewhere"\npassword = "elsewhere-secret"\nshards = ["eu"]\n');
});

afterAll(async () => {
  await direct?.end();
  await edge?.stop();
  await db?.destroy();
});

it('refuses a user limited to other shards with 1044, data untouched, and serves everyone else', async () => {
  const limited = await edge.connect({ user: 'elsewhere', password: 'elsewhere-secret', database: 'app' });
  const err = (await limited.query('DELETE FROM items').then(
    () => null,
    (e: unknown) => e,
  )) as { errno: number; sqlState: string; message: string } | null;
  expect(err).toMatchObject({ errno: 1044, sqlState: '42000', message: "Access denied for user 'elsewhere' to shard 'default' (users.shards)" });
  const [rows] = await direct.query<RowDataPacket[]>('SELECT name FROM app.items');
  expect(rows).toEqual([{ name: 'one' }]);
  await limited.end();
  const app = await edge.connect({ database: 'app' });
  const [served] = await app.query<RowDataPacket[]>('SELECT name FROM items');
  expect(served).toEqual([{ name: 'one' }]);
  await app.end();
});
