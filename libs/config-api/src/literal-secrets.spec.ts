// config-api's store refuses literal secrets unless the document opts in; `${VAR}` placeholders pass.
import { createBus, EmbeddedBroker } from '@dbproxy/bus';
import { ConfigStore } from './config-store';

const doc = (password: string, extra: Record<string, unknown> = {}) => ({
  users: [{ name: 'app', password: '${APP_PASSWORD}' }],
  mysql_backends: [{ name: 'db1', address: '127.0.0.1:3306', role: 'primary', password }],
  bus: { signing: {} },
  ...extra,
});

describe('ConfigStore literal secrets', () => {
  const env = { APP_PASSWORD: 'from-env', DB_PASSWORD: 'db-from-env' };
  let store: ConfigStore;
  const bus = createBus({ name: 'literal-secrets', embedded: new EmbeddedBroker() });
  beforeAll(async () => {
    store = await ConfigStore.open(bus, env, () => 10);
  });
  afterAll(() => bus.close());

  it('refuses a literal backend password, naming its key path', async () => {
    const outcome = await store.write({ document: doc('hunter2-literal'), author: 't', expectedEpoch: undefined });
    expect(outcome).toEqual({ kind: 'invalid', issues: [expect.objectContaining({ path: 'mysql_backends[0].password', message: expect.stringContaining('literal secret refused') })] });
    expect(await store.read()).toBeUndefined();
  });

  it('accepts ${VAR} placeholders and stores them unexpanded', async () => {
    const outcome = await store.write({ document: doc('${DB_PASSWORD}'), author: 't', expectedEpoch: undefined });
    expect(outcome.kind).toBe('applied');
    expect((await store.read())?.record.config).toMatchObject({ mysql_backends: [{ password: '${DB_PASSWORD}' }] });
  });

  it('stores literal secrets only when the document sets config_api.allow_literal_secrets', async () => {
    const outcome = await store.write({ document: doc('hunter2-literal', { config_api: { allow_literal_secrets: true } }), author: 't', expectedEpoch: undefined });
    expect(outcome.kind).toBe('applied');
  });

  it('lets a change carry over a literal the KV already holds (a drain), but refuses a new or changed one', async () => {
    const kept = await store.write({ document: doc('hunter2-literal', { mysql: { enabled: true } }), author: 't', expectedEpoch: undefined });
    expect(kept.kind).toBe('applied');
    const changed = await store.write({ document: doc('hunter3-literal'), author: 't', expectedEpoch: undefined });
    expect(changed).toEqual({ kind: 'invalid', issues: [expect.objectContaining({ path: 'mysql_backends[0].password' })] });
  });
});
