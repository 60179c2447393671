// The fixture of tests that need no replica: one real MariaDB primary behind mysql-edge, a root
// connection to it, and the setup statements run there; stopped in reverse order.
import type { CommonTomlParts } from '@dbproxy/runtime/testing';
import { startMariaDb, type MariaDbOptions } from '@dbproxy/testing';
import { createConnection, type Connection } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

export interface PrimaryOnly {
  readonly db: Awaited<ReturnType<typeof startMariaDb>>;
  readonly edge: EdgeHarness;
  readonly root: Connection;
}

/** `mysqlToml` goes into the edge's [mysql]; `setup` runs as root on the primary. */
export async function startPrimaryOnly(mysqlToml: string, setup: readonly string[], settings?: MariaDbOptions['settings'], health?: CommonTomlParts['health']): Promise<PrimaryOnly> {
  const db = await startMariaDb({ replicas: 0, ...(settings ? { settings } : {}) });
  const edge = await startEdge([{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' }], mysqlToml, '', '', undefined, health ? { health } : {});
  const root = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  for (const sql of setup) await root.query(sql);
  return { db, edge, root };
}

export async function stopPrimaryOnly(f: Partial<PrimaryOnly>): Promise<void> {
  await f.root?.end();
  await f.edge?.stop();
  await f.db?.destroy();
}
