// The operator CLI end to end: ./bin/dbproxy status/drain/undrain (and top, in tmux) against
// config-api + topology and a mysql-edge, three real processes on a real nats-server, with
// MariaDB and two replicas behind the edge and mysql2 clients in front of it.
// Needs `npm run build` (npm test builds first).
import { spawnSync } from 'node:child_process';
import { freePort, waitFor } from '@dbproxy/testing';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { ADMIN_TOKEN, BIN, edgeThreads, runCli, servedBy, startOperatorEstate, VIEWER_TOKEN, type OperatorEstate } from './support/operator-fixture';

jest.setTimeout(180_000);

let estate: OperatorEstate;

beforeAll(async () => {
  estate = await startOperatorEstate();
});

afterAll(async () => {
  await estate?.stop();
});

interface StatusJson {
  epoch: number;
  edges: { instance_id: string; protocol: string; epoch: number }[];
  backends: { name: string; role: string; status: string; health: string; lag_seconds: number | null; latency_ms: number | null }[];
}

async function statusJson(): Promise<StatusJson> {
  const res = await runCli(['status', '--json', ...estate.api]);
  if (res.code !== 0) throw new Error(`status exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout) as StatusJson;
}

/** Reads through the read-only listener until `n` in a row ran on servers `ok` accepts. */
async function readsServedBy(c: Connection, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(await servedBy(c));
  return ids;
}

describe('dbproxy status', () => {
  it('prints the config epoch, the live edge and every backend with its health, lag and status', async () => {
    const ready = await waitFor(async () => {
      const s = await statusJson();
      return s.edges.length === 1 && s.backends.every((b) => b.health === 'up' && b.latency_ms !== null) && s.backends.some((b) => b.lag_seconds !== null) ? s : null;
    }, { timeoutMs: 30_000, description: 'the edge and three healthy backends in status' });
    expect(ready.epoch).toBe(1);
    expect(ready.edges[0]).toMatchObject({ protocol: 'mysql', epoch: 1 });
    expect(ready.backends.map((b) => [b.name, b.role, b.status])).toEqual([
      ['primary', 'primary', 'online'],
      ['r1', 'replica', 'online'],
      ['r2', 'replica', 'online'],
    ]);

    const table = await runCli(['status', ...estate.api]);
    expect(table.code).toBe(0);
    expect(table.stderr).toBe('');
    const lines = table.stdout.split('\n');
    expect(lines[0]).toBe('config epoch 1');
    const edgeHeader = lines.findIndex((l) => l.startsWith('EDGE '));
    expect(lines[edgeHeader]).toMatch(/^EDGE +PROTOCOL +EPOCH +SESSIONS +PAUSED +VERSION$/);
    expect(lines[edgeHeader + 1]).toMatch(new RegExp(`^${ready.edges[0]!.instance_id} +mysql +1 +\\d+ +\\S+ +0\\.1\\.0$`));
    const backendHeader = lines.findIndex((l) => l.startsWith('BACKEND '));
    expect(lines[backendHeader]).toMatch(/^BACKEND +PROTOCOL +ADDRESS +ROLE +SHARD +STATUS +HEALTH +LAG +LATENCY +ERROR$/);
    expect(lines[backendHeader + 1]).toMatch(new RegExp(`^primary +mysql +127\\.0\\.0\\.1:${estate.db.primary.port} +primary +default +online +up +- +[\\d.]+ms +-$`));
    expect(lines[backendHeader + 2]).toMatch(/^r1 +mysql +\S+ +replica +default +online +up +[\d.]+s +[\d.]+ms +-$/);
    // columns line up: every row's STATUS starts where the header's does
    const at = lines[backendHeader]!.indexOf('STATUS');
    for (const row of lines.slice(backendHeader + 1, backendHeader + 4)) expect(row.slice(at, at + 6)).toBe('online');
  });
});

describe('dbproxy drain / undrain', () => {
  it('drains a replica: a SELECT SLEEP running on it finishes there, new reads avoid it, its connections close; undrain brings it back', async () => {
    const [r1, r2] = estate.db.replicas as [typeof estate.db.primary, typeof estate.db.primary];
    const r1Direct = await estate.direct(r1.port);
    const sleepers = await Promise.all(Array.from({ length: 6 }, () => estate.connect(estate.roPort)));
    const reader = await estate.connect(estate.roPort);
    try {
      const running = sleepers.map((c) => c.query<RowDataPacket[]>('SELECT @@server_id AS id, SLEEP(3) AS slept').then(([rows]) => Number(rows[0]?.['id'])));
      await waitFor(async () => (await edgeThreads(r1Direct)).some((t) => t.info?.includes('SLEEP') === true) || null, { timeoutMs: 2_500, description: 'a SELECT SLEEP running on r1' });

      const drained = await runCli(['drain', 'r1', ...estate.api]);
      expect(drained).toEqual({ code: 0, stdout: 'backend r1 (mysql): now offline_soft (config epoch 2)\n', stderr: '' });
      // every statement that was running finishes with its result; some of them ran on r1
      const servers = await Promise.all(running);
      expect(servers).toContain(r1.serverId);

      // new reads avoid r1, and the edge keeps no connection there
      await waitFor(async () => !(await readsServedBy(reader, 10)).includes(r1.serverId) || null, { timeoutMs: 5_000, description: 'reads off r1' });
      expect(await readsServedBy(reader, 20)).toEqual(Array(20).fill(r2.serverId));
      await waitFor(async () => (await edgeThreads(r1Direct)).length === 0 || null, { timeoutMs: 3_000, description: "no edge connection left on r1" });

      const status = await statusJson();
      expect(status.epoch).toBe(2);
      expect(status.backends.find((b) => b.name === 'r1')).toMatchObject({ status: 'offline_soft', health: 'up' });
      const again = await runCli(['drain', 'r1', ...estate.api]);
      expect(again.stdout).toBe('backend r1 (mysql): already offline_soft (config epoch 2)\n');

      // the epoch's history entry is authored by the token's name
      const epochs = (await (await fetch(`${estate.apiUrl}/v1/config/epochs`, { headers: { authorization: `Bearer ${VIEWER_TOKEN}` } })).json()) as { epochs: { epoch: number; author: string; summary: string }[] };
      expect(epochs.epochs.find((e) => e.epoch === 2)).toMatchObject({ author: 'ops' });

      const undrained = await runCli(['undrain', 'r1', ...estate.api]);
      expect(undrained).toEqual({ code: 0, stdout: 'backend r1 (mysql): now online (config epoch 3)\n', stderr: '' });
      await waitFor(async () => (await readsServedBy(reader, 10)).includes(r1.serverId) || null, { timeoutMs: 10_000, description: 'reads back on r1' });

      // both are in the action log with the token's name
      const log = (await (await fetch(`${estate.apiUrl}/v1/actions`, { headers: { authorization: `Bearer ${VIEWER_TOKEN}` } })).json()) as { actions: { action: string; target: string; token: string; outcome: string }[] };
      expect(log.actions.filter((a) => a.target === 'r1').map(({ action, token, outcome }) => ({ action, token, outcome }))).toEqual([
        { action: 'drain', token: 'ops', outcome: 'ok' },
        { action: 'drain', token: 'ops', outcome: 'ok' },
        { action: 'undrain', token: 'ops', outcome: 'ok' },
      ]);
    } finally {
      await Promise.all([...sleepers, reader, r1Direct].map((c) => c.end()));
    }
  });

  it('answers an unknown backend, a read-only token, a wrong token and an unreachable API with clear errors (exit 1)', async () => {
    expect(await runCli(['drain', 'nope', ...estate.api])).toEqual({ code: 1, stdout: '', stderr: 'dbproxy drain: config-api: no backend named "nope" (404 unknown_backend)\n' });
    expect(await runCli(['drain', 'r1', '--url', estate.apiUrl, '--token', VIEWER_TOKEN])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'dbproxy drain: config-api: token "viewer" is read-only (403); this command needs an admin token\n',
    });
    expect(await runCli(['status', '--url', estate.apiUrl], { DBPROXY_API_TOKEN: 'wrong-token' })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'dbproxy status: config-api refused the token (401 unauthorized); set --token or DBPROXY_API_TOKEN\n',
    });
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const closed = await runCli(['status'], { DBPROXY_API_URL: nobody, DBPROXY_API_TOKEN: ADMIN_TOKEN });
    expect(closed).toEqual({ code: 1, stdout: '', stderr: `dbproxy status: config-api at ${nobody} is unreachable (ECONNREFUSED); set --url or DBPROXY_API_URL\n` });
  });
});

interface SessionJson {
  id: string;
  edge: string;
  user: string;
  state: string;
  backend: string | null;
  statement: string | null;
}

describe('dbproxy sessions / pools / kill / pause / resume', () => {
  it('lists a running session with its statement and backend, filters, lists pools, and kills it with a reason', async () => {
    const victim = await estate.connect(estate.rwPort);
    const errors: Error[] = [];
    victim.on('error', (e) => errors.push(e));
    const running = victim.query('SELECT SLEEP(20)').catch((e: Error) => e);
    try {
      const found = await waitFor(async () => {
        const res = await runCli(['sessions', '--json', '--user', 'app', ...estate.api]);
        const list = (JSON.parse(res.stdout) as { sessions: SessionJson[] }).sessions;
        return list.find((x) => x.statement?.includes('SLEEP') === true) ?? null;
      }, { timeoutMs: 10_000, description: 'the sleeping session in GET /v1/sessions' });
      expect(found).toMatchObject({ user: 'app', backend: expect.stringMatching(/^(primary|r1|r2)$/) });
      const backend = found.backend as string; // a read: the edge sends it to a replica or the primary

      const table = await runCli(['sessions', '--backend', backend, ...estate.api]);
      expect(table.code).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID +EDGE +PROTOCOL +CLIENT +USER +DATABASE +STATE +BACKEND +PINNED +EPOCH +AGE +IN +OUT +STATEMENT$/);
      const row = lines.find((l) => l.startsWith(`${found.id} `)) as string;
      expect(row).toMatch(new RegExp(`^${found.id} +${found.edge} +mysql +127\\.0\\.0\\.1:\\d+ +app +app +\\S.* +${backend} +.* +SELECT SLEEP`));
      // filters reach the API: nobody is called "nobody"
      expect((await runCli(['sessions', '--user', 'nobody', ...estate.api])).stdout.trimEnd().split('\n')).toHaveLength(1);

      const pools = await runCli(['pools', '--backend', backend, ...estate.api]);
      const poolLines = pools.stdout.trimEnd().split('\n');
      expect(poolLines[0]).toMatch(/^EDGE +PROTOCOL +BACKEND +IN_USE +IDLE +WAITERS +CHECKOUTS +TIMEOUTS +RESETS +WAIT_P50 +WAIT_P95 +WAIT_P99$/);
      expect(poolLines.length).toBeGreaterThan(1);
      expect(poolLines.slice(1).every((l) => l.split(/ +/)[2] === backend)).toBe(true);
      expect(poolLines.slice(1).some((l) => Number(l.split(/ +/)[3]) >= 1)).toBe(true); // the sleeping statement's connection is in use

      const killed = await runCli(['kill', found.id, '--reason', 'runaway query', ...estate.api]);
      expect(killed).toEqual({ code: 0, stdout: `session ${found.id} on edge ${found.edge}: killed\n`, stderr: '' });
      const outcome = await running;
      expect(String((outcome as Error).message ?? errors[0]?.message)).toMatch(/runaway query|killed|closed/i);
      expect(await runCli(['kill', found.id, ...estate.api])).toMatchObject({ code: 1, stderr: expect.stringContaining(`no live edge has session ${found.id}`) });
    } finally {
      victim.destroy();
    }
  });

  it('pauses an edge (new statements wait, status says paused) and resumes it (they run)', async () => {
    const edge = (await statusJson()).edges[0]!.instance_id;
    const client = await estate.connect(estate.rwPort);
    try {
      expect(await runCli(['pause', edge, ...estate.api])).toEqual({ code: 0, stdout: `edge ${edge}: paused\n`, stderr: '' });
      const status = await runCli(['status', ...estate.api]);
      expect(status.stdout.split('\n').find((l) => l.startsWith(`${edge} `))).toMatch(/ yes +0\.1\.0$/);
      let done = false;
      const held = client.query('SELECT 1 AS one').then(() => (done = true));
      await new Promise((r) => setTimeout(r, 1_000));
      expect(done).toBe(false);
      expect(await runCli(['resume', edge, ...estate.api])).toEqual({ code: 0, stdout: `edge ${edge}: resumed\n`, stderr: '' });
      await held;
      expect(done).toBe(true);
      expect(await runCli(['pause', 'no-such-edge', ...estate.api])).toMatchObject({ code: 1, stderr: expect.stringContaining('no live edge instance is called no-such-edge') });
    } finally {
      await client.end();
    }
  });
});

describe('dbproxy top (in a real terminal: tmux)', () => {
  const socket = ['-L', `dbproxy-top-test-${process.pid}`];
  const tmux = (...args: string[]) => spawnSync('tmux', [...socket, ...args], { encoding: 'utf8' });
  const screen = () => tmux('capture-pane', '-p', '-t', 'top').stdout;

  afterAll(() => {
    tmux('kill-server');
  });

  it('shows the edges, backends and sessions of a live load, refreshes every second, and q / Ctrl-C restore the terminal', async () => {
    const clients = await Promise.all(Array.from({ length: 3 }, () => estate.connect(estate.rwPort)));
    let loading = true;
    const load = clients.map(async (c) => {
      while (loading) await c.query('SELECT SLEEP(0.02)');
    });
    const top = [process.execPath, BIN, 'top', ...estate.api].map((a) => `'${a}'`).join(' ');
    const script = `S=$(stty -g); ${top}; echo "top-exited-$?"; [ "$S" = "$(stty -g)" ] && echo tty-restored; ${top}; echo "top-exited-again-$?"; sleep 600`;
    try {
      expect(tmux('new-session', '-d', '-s', 'top', '-x', '160', '-y', '40', script).status).toBe(0);
      const edge = (await statusJson()).edges[0]!.instance_id;
      const shown = await waitFor(() => {
        const text = screen();
        const edgeLine = text.split('\n').find((l) => l.startsWith(`${edge} `));
        // the statements-per-second column needs two samples
        return edgeLine !== undefined && /^\S+ +mysql +\d+ +\d+ +\d+\.\d/.test(edgeLine) ? text : null;
      }, { timeoutMs: 15_000, description: `top showing edge ${edge} with a statement rate:\n${screen()}` });
      const lines = shown.split('\n');
      expect(lines[0]).toMatch(new RegExp(`^dbproxy top  ${estate.apiUrl.replace(/[.]/g, '\\.')}  config epoch \\d+  \\d\\d:\\d\\d:\\d\\d UTC  \\(q quits\\)`));
      expect(lines.find((l) => l.startsWith('EDGE '))).toMatch(/^EDGE +PROTOCOL +EPOCH +SESSIONS +STMT\/S +PAUSED$/);
      expect(lines.find((l) => l.startsWith('BACKEND '))).toMatch(/^BACKEND +PROTOCOL +ROLE +STATUS +HEALTH +LAG +LATENCY +IN_USE +IDLE +WAITERS$/);
      for (const name of ['primary', 'r1', 'r2']) expect(lines.find((l) => l.startsWith(`${name} `))).toMatch(new RegExp(`^${name} +mysql +(primary|replica) +online +up `));
      // the load's three sessions, with their user and statement
      const sessionsShown = await waitFor(() => {
        const text = screen();
        const count = Number(/^sessions: (\d+)/m.exec(text)?.[1] ?? 0);
        return count >= 3 && text.split('\n').filter((l) => new RegExp(`^\\S+ +${edge} +app +127\\.0\\.0\\.1:\\d+ .*SELECT SLEEP`).test(l)).length >= 3 ? text : null;
      }, { timeoutMs: 10_000, description: `top listing the load's sessions:\n${screen()}` });
      expect(sessionsShown.split('\n').find((l) => l.startsWith('SESSION '))).toMatch(/^SESSION +EDGE +USER +CLIENT +STATE +BACKEND +AGE +STATEMENT$/);
      // it refreshes: the clock moves
      const clock = (text: string) => /(\d\d:\d\d:\d\d) UTC/.exec(text)?.[1];
      await waitFor(() => clock(screen()) !== clock(shown) || null, { timeoutMs: 3_000, description: 'a second frame' });

      tmux('send-keys', '-t', 'top', 'q');
      const after = await waitFor(() => (screen().includes('top-exited-0') ? screen() : null), { timeoutMs: 5_000, description: 'top to quit on q' });
      expect(after).toContain('tty-restored');
      expect(after).not.toContain('dbproxy top'); // the alternate screen is gone
      await waitFor(() => screen().includes('dbproxy top') || null, { timeoutMs: 10_000, description: 'top again' });
      tmux('send-keys', '-t', 'top', 'C-c');
      await waitFor(() => screen().includes('top-exited-again-0') || null, { timeoutMs: 5_000, description: 'top to quit on Ctrl-C' });
    } finally {
      loading = false;
      await Promise.all(load);
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
