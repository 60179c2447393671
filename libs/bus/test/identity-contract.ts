// Sender identity on the signed kinds (bgd actions, xa execute and its reply, config epochs),
// run on each bus: the owner's signature is accepted; a wrong key, another service's key, no
// signature, a replay and a stale message are refused and counted.
import { waitFor } from '@dbproxy/testing';
import {
  BusIdentities,
  generateServiceKey,
  KvRecords,
  openRecords,
  publishMessage,
  rejectedMessageCounts,
  requestMessage,
  serveMessages,
  SIGNING_SERVICES,
  Subjects,
  subscribeMessages,
  useIdentities,
  type BgdAction,
  type Bus,
  type XaExecuteRequest,
} from '../src/index';

const KEYS = Object.fromEntries(SIGNING_SERVICES.map((s) => [s, generateServiceKey()]));
const TRUSTED = Object.fromEntries(Object.entries(KEYS).map(([s, k]) => [s, k.publicKey]));

/** Identities of a process running `services` with the deployment's keys. */
function deployment(services: readonly string[], maxAgeMs = 30_000): BusIdentities {
  return BusIdentities.create({ trusted: TRUSTED, seeds: Object.fromEntries(services.flatMap((s) => (KEYS[s] ? [[s, KEYS[s].seed]] : []))), maxAgeMs });
}

/** An impostor: signs as `service` with a key of its own (it believes its own public key). */
function impostor(service: string): BusIdentities {
  const own = generateServiceKey();
  return BusIdentities.create({ trusted: { ...TRUSTED, [service]: own.publicKey }, seeds: { [service]: own.seed }, maxAgeMs: 30_000 });
}

const action = (id: string): BgdAction => ({ deployment: 'orders', actionId: id, issuedAt: new Date().toISOString(), reason: 'test', action: 'shun', backend: 'db2' });
const xaRequest: XaExecuteRequest = { requestedBy: 'edge-1', statement: 'UPDATE t SET a = 1', participants: [{ shard: 's1', backend: 'db1' }], deadlineMs: 1000 };
const rejected = (kindReason: string): number => rejectedMessageCounts()[kindReason] ?? 0;
const settle = () => new Promise((r) => setTimeout(r, 150));

export function runIdentityContract(label: string, open: (name: string) => Promise<Bus>): void {
  describe(`sender identity (${label})`, () => {
    const buses: Bus[] = [];
    const bus = async (name: string, identities: BusIdentities): Promise<Bus> => {
      const b = await open(name);
      useIdentities(b, identities);
      buses.push(b);
      return b;
    };
    afterEach(async () => {
      await Promise.all(buses.splice(0).map((b) => b.close()));
    });

    it('accepts bgd actions signed by bgd-monitor and refuses wrong keys, other services, unsigned, replayed and stale ones', async () => {
      const receiver = await bus('topology', deployment(['topology'], 400));
      const got: string[] = [];
      await subscribeMessages(receiver, Subjects.bgdActions.pattern(), (a) => void got.push(a.actionId)).ready;
      const raw: Uint8Array[] = [];
      await receiver.subscribe('dbproxy.bgd.actions', (m) => void raw.push(m.data)).ready;

      const monitor = await bus('bgd-monitor', deployment(['bgd-monitor']));
      const before = { bad: rejected('bgd_action/bad-signature'), wrong: rejected('bgd_action/wrong-sender'), unsigned: rejected('bgd_action/unsigned'), replayed: rejected('bgd_action/replayed'), stale: rejected('bgd_action/stale') };
      publishMessage(monitor, Subjects.bgdActions, {}, action('genuine'));
      await waitFor(() => got.includes('genuine'), { timeoutMs: 15_000 });

      publishMessage(await bus('fake-monitor', impostor('bgd-monitor')), Subjects.bgdActions, {}, action('wrong-key'));
      // mysql-edge holds a genuine key, but bgd actions are not its to send: it must forge the signer name.
      const edge = await bus('edge', deployment(['mysql-edge']));
      const forged = new TextDecoder().decode(deployment(['mysql-edge']).seal(new TextEncoder().encode(JSON.stringify({ v: 1, ...action('other-service') })), { service: 'mysql-edge', kind: 'bgd_action' }, 'dbproxy.bgd.actions', 'test').data);
      edge.publish('dbproxy.bgd.actions', new TextEncoder().encode(forged));
      edge.publish('dbproxy.bgd.actions', new TextEncoder().encode(JSON.stringify({ v: 1, ...action('unsigned') })));
      await waitFor(() => raw.length >= 4, { timeoutMs: 15_000 });
      monitor.publish('dbproxy.bgd.actions', raw[0] as Uint8Array); // replay of the genuine one, fresh
      await waitFor(() => rejected('bgd_action/replayed') > before.replayed, { timeoutMs: 15_000 });

      const late = await bus('monitor-late', deployment(['bgd-monitor']));
      const captured: Uint8Array[] = [];
      await late.subscribe('dbproxy.bgd.actions', (m) => void captured.push(m.data)).ready;
      publishMessage(late, Subjects.bgdActions, {}, action('captured'));
      await waitFor(() => got.includes('captured') && captured.length > 0, { timeoutMs: 15_000 });
      await new Promise((r) => setTimeout(r, 600)); // beyond the receiver's 400 ms window
      edge.publish('dbproxy.bgd.actions', captured[0] as Uint8Array);
      await waitFor(() => rejected('bgd_action/stale') > before.stale, { timeoutMs: 15_000 });
      await settle();

      expect(got).toEqual(['genuine', 'captured']);
      expect(rejected('bgd_action/bad-signature')).toBe(before.bad + 1);
      expect(rejected('bgd_action/wrong-sender')).toBe(before.wrong + 1);
      expect(rejected('bgd_action/unsigned')).toBe(before.unsigned + 1);
      expect(rejected('bgd_action/replayed')).toBe(before.replayed + 1);
      expect(rejected('bgd_action/stale')).toBe(before.stale + 1);
    });

    it('serves xa execute only to mysql-edge and trusts only replies signed by xa-coordinator for that request', async () => {
      const coordinator = await bus('xa', deployment(['xa-coordinator']));
      const served: string[] = [];
      await serveMessages(coordinator, Subjects.xaExecute.pattern(), async (req) => {
        served.push(req.requestedBy);
        return { xid: 'x1', decision: 'commit' as const, outcomes: [{ shard: 's1', backend: 'db1', outcome: 'committed' as const }] };
      }).ready;
      const edge = await bus('edge', deployment(['mysql-edge']));
      await expect(requestMessage(edge, Subjects.xaExecute, {}, xaRequest, { timeoutMs: 3000 })).resolves.toMatchObject({ xid: 'x1', decision: 'commit' });

      const before = rejected('xa_execute/bad-signature');
      const fake = await bus('fake-edge', impostor('mysql-edge'));
      const refused = requestMessage(fake, Subjects.xaExecute, {}, { ...xaRequest, requestedBy: 'impostor' }, { timeoutMs: 3000 });
      await expect(refused).rejects.toMatchObject({ code: 'DBP_ERR_BUS_REMOTE', message: expect.stringContaining('DBP_ERR_BUS_UNAUTHENTICATED') });
      expect(rejected('xa_execute/bad-signature')).toBe(before + 1);
      expect(served).toEqual(['edge-1']);
    });

    it('refuses an xa reply from a coordinator with the wrong key', async () => {
      const fakeCoordinator = await bus('fake-xa', impostor('xa-coordinator'));
      await serveMessages(fakeCoordinator, Subjects.xaExecute.pattern(), async () => ({ xid: 'forged', decision: 'commit' as const, outcomes: [] })).ready;
      const edge = await bus('edge', deployment(['mysql-edge']));
      const before = rejected('xa_execute_reply/bad-signature');
      await expect(requestMessage(edge, Subjects.xaExecute, {}, xaRequest, { timeoutMs: 3000 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_UNAUTHENTICATED' });
      expect(rejected('xa_execute_reply/bad-signature')).toBe(before + 1);
    });

    it('applies config epochs written by config-api and refuses other writers and a replayed old epoch', async () => {
      const api = await bus('config-api', deployment(['config-api']));
      const apiStore = await openRecords(api, KvRecords.config);
      await apiStore.delete({});
      const follower = await bus('follower', deployment(['mysql-edge']));
      const store = await openRecords(follower, KvRecords.config);
      const seen: string[] = [];
      await store.watch({}, (r) => void (r.value && seen.push(r.value.author))).ready;
      const record = (author: string) => ({ config: { users: [] }, hash: author, author, appliedAt: new Date().toISOString() });

      await apiStore.put({}, record('api-1'));
      await waitFor(() => seen.includes('api-1'), { timeoutMs: 15_000 });
      const old = await apiStore.kv.get('current');
      await apiStore.put({}, record('api-2'));
      await waitFor(() => seen.includes('api-2'), { timeoutMs: 15_000 });

      const before = { bad: rejected('config_epoch/bad-signature'), unsigned: rejected('config_epoch/unsigned'), replayed: rejected('config_epoch/replayed') };
      await (await openRecords(await bus('fake-api', impostor('config-api')), KvRecords.config)).put({}, record('impostor'));
      await follower.kv('dbproxy-config').then((kv) => kv.put('current', new TextEncoder().encode(JSON.stringify({ v: 1, ...record('unsigned') }))));
      await follower.kv('dbproxy-config').then((kv) => kv.put('current', old?.value as Uint8Array)); // api-1 again
      await waitFor(() => rejected('config_epoch/replayed') > before.replayed, { timeoutMs: 15_000 });
      await settle();

      expect(seen).toEqual(['api-1', 'api-2']);
      expect(rejected('config_epoch/bad-signature')).toBe(before.bad + 1);
      expect(rejected('config_epoch/unsigned')).toBe(before.unsigned + 1);
      expect(await store.get({})).toMatchObject({ value: { author: 'api-1' } }); // a reader starting now accepts the validly signed (old) value
    });

    it('refuses to send a signed kind without the owner key (DBP_ERR_BUS_NOT_SIGNER)', async () => {
      const edge = await bus('edge', deployment(['mysql-edge']));
      expect(() => publishMessage(edge, Subjects.bgdActions, {}, action('x'))).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_NOT_SIGNER' }));
    });
  });
}
