// Fail static: a NATS outage under running services crashes none of them, and they resume
// (configuration writes, KV following, heartbeats) when it returns on the same port.
import { freePort, startNats, tmpDir, waitFor, type NatsServer, type TempDir } from '@dbproxy/testing';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';

jest.setTimeout(90_000);

const TOKEN = 'outage-admin-token-0123456789';

describe('a NATS outage under running services', () => {
  let nats: NatsServer;
  let dir: TempDir;
  const procs: DbproxyProcess[] = [];
  const ports: { api: number; admin: number }[] = [];

  const api = (i: number) => `http://127.0.0.1:${ports[i]?.api}`;
  const admin = (i: number) => `http://127.0.0.1:${ports[i]?.admin}`;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const epochOf = async (i: number) => {
    const text = await (await fetch(`${admin(i)}/metrics`)).text();
    return Number(/dbproxy_config_epoch\{[^}]*\} (\d+)/.exec(text)?.[1] ?? -1);
  };

  beforeAll(async () => {
    nats = await startNats();
    dir = await tmpDir('outage');
    for (let i = 0; i < 2; i++) {
      const p = { api: await freePort(), admin: await freePort() };
      ports.push(p);
      const path = writeConfig(
        dir.path,
        `dbproxy-${i}.toml`,
        `[bus]\nnats_url = "${nats.url}"\nconnect_timeout_seconds = 2\n[telemetry]\nlog_level = "warn"\n` +
          `[proxy.admin]\nconfig_api = "127.0.0.1:${p.admin}"\n[config_api]\nlisten = "127.0.0.1:${p.api}"\n` +
          `[[config_api.tokens]]\nname = "ops"\ntoken = "${TOKEN}"\n`,
      );
      const proc = startDbproxy(['start', 'config-api', '--config', path]);
      procs.push(proc);
      await waitForHttp(`${admin(i)}/readyz`).catch((err) => {
        throw new Error(`process ${i} did not become ready: ${String(err)}\n${proc.output()}`);
      });
    }
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await nats?.destroy();
    await dir?.remove();
  });

  it('keeps both processes up and degraded while NATS is down, and resumes when it returns', async () => {
    await nats.stop();
    for (let i = 0; i < 2; i++) {
      const report = (await waitFor(async () => {
        const body = (await (await fetch(`${admin(i)}/readyz`)).json()) as { status: string; reasons: string[] };
        return body.status === 'degraded' ? body : false;
      })) as { reasons: string[] };
      expect(report.reasons.join()).toMatch(/bus disconnected/);
    }
    const during = await fetch(`${api(0)}/v1/config`, { headers: auth });
    expect(during.status).toBe(503);
    expect(await during.json()).toMatchObject({ error: 'bus_unavailable' });
    expect(procs.every((p) => p.child.exitCode === null)).toBe(true);

    await nats.start();
    await waitForHttp(`${admin(0)}/readyz`, 200, 20_000);
    const config = await waitFor(async () => {
      const res = await fetch(`${api(0)}/v1/config`, { headers: auth });
      return res.status === 200 ? ((await res.json()) as { epoch: number; config: Record<string, unknown> }) : false;
    }, { timeoutMs: 20_000 });
    const put = await fetch(`${api(0)}/v1/config`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json', 'if-match': String(config.epoch) },
      body: JSON.stringify({ ...config.config, health: { interval_seconds: 3 } }),
    });
    expect(put.status).toBe(200);
    const { epoch } = (await put.json()) as { epoch: number };
    // the other process resumed its KV watch and applies the epoch written after the outage
    await waitFor(async () => (await epochOf(1)) === epoch, { timeoutMs: 20_000, description: `epoch ${epoch} in the second process` });
    expect(procs.every((p) => p.child.exitCode === null)).toBe(true);
  });
});
