// Transaction mode's own authentication answers a client that sends the wrong message mid-exchange
// with FATAL 08P01 naming what it expected (PostgreSQL's protocol_violation), not the generic
// XX000 that only exceptions outside dbproxy's errors get.
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';
import { errorOf, RawClient } from './raw-client';

jest.setTimeout(90_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;

beforeAll(async () => {
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg);
  edge = await startEdge(
    [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra: `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"` }],
    'routing_mode = "transaction"',
    '[[users]]\nname = "app"\npassword = "app-secret"\n\n[[users]]\nname = "legacy"\npassword = "legacy-secret"\npostgres_auth_method = "md5"',
  );
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

/** Starts up as `user`, then answers the edge's first authentication request with a Query. */
async function queryInsteadOfAuthentication(user: string): Promise<{ request: string | undefined; error: ReturnType<typeof errorOf> }> {
  const c = await RawClient.connect(edge.rwPort);
  c.send({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map([['user', user], ['database', 'postgres']]) });
  const request = await c.next();
  c.send({ type: 'Query', sql: 'SELECT 1' });
  const answers = [];
  for (let m = await c.next(); m; m = await c.next()) answers.push(m);
  c.socket.destroy();
  return { request: request?.type, error: errorOf(answers) };
}

it('answers a Query sent instead of SASLInitialResponse with FATAL 08P01 naming the expected message', async () => {
  const { request, error } = await queryInsteadOfAuthentication('app');
  expect(request).toBe('AuthenticationSASL');
  expect(error).toEqual({ severity: 'FATAL', code: '08P01', message: 'protocol violation: expected SASLInitialResponse, got Query' });
});

it('answers a Query sent instead of the md5 password with FATAL 08P01 naming the expected message', async () => {
  const { request, error } = await queryInsteadOfAuthentication('legacy');
  expect(request).toBe('AuthenticationMD5Password');
  expect(error).toEqual({ severity: 'FATAL', code: '08P01', message: 'protocol violation: expected a password message, got Query' });
});
