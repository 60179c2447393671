// The runtime's sender identity: configured keys are enforced on the bus, a signing service
// without its seed does not start, and refusals reach dbproxy_bus_rejected_total and the log.
import { Writable } from 'node:stream';
import { createBus, EmbeddedBroker, generateServiceKey, publishMessage, Subjects, subscribeMessages } from '@dbproxy/bus';
import { validateDocument } from '@dbproxy/config';
import { createLogger, MetricsRegistry, observeLibraryChannels } from '@dbproxy/observability';
import { applyBusIdentities } from './bus-identity';

const keys = { config_api: generateServiceKey(), bgd_monitor: generateServiceKey(), mysql_edge: generateServiceKey(), xa_coordinator: generateServiceKey() };
const configWith = (signing: Record<string, unknown>) => {
  const result = validateDocument({ users: [], bus: { identities: Object.fromEntries(Object.entries(keys).map(([s, k]) => [s, k.publicKey])), signing } }, {});
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.config;
};

describe('applyBusIdentities', () => {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', service: 't', instance: 'i', destination: new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) }) });

  it('refuses a process that runs bgd-monitor without its seed, and a seed of another key', () => {
    const bus = createBus({ name: 'no-seed', embedded: new EmbeddedBroker() });
    expect(() => applyBusIdentities(bus, configWith({}), ['bgd-monitor'], logger)).toThrow(/DBP_ERR_BUS_IDENTITY_CONFIG|bgd_monitor_seed/);
    expect(() => applyBusIdentities(bus, configWith({ bgd_monitor_seed: generateServiceKey().seed }), ['bgd-monitor'], logger)).toThrow(/belongs to public key/);
    void bus.close();
  });

  it('enforces the configured keys even on the embedded bus; refusals are counted and logged without the seed', async () => {
    const metrics = new MetricsRegistry({ service: 't' });
    const unobserve = observeLibraryChannels(logger, metrics);
    const broker = new EmbeddedBroker();
    const receiver = createBus({ name: 'topology', embedded: broker });
    applyBusIdentities(receiver, configWith({}), ['topology'], logger);
    const got: string[] = [];
    await subscribeMessages(receiver, Subjects.bgdActions.pattern(), (a) => void got.push(a.actionId)).ready;
    // Another process on automatic keys (no identities applied): its signature is not bgd-monitor's configured key.
    const stranger = createBus({ name: 'stranger', embedded: broker });
    const action = { deployment: 'd', issuedAt: new Date().toISOString(), reason: 'r', action: 'shun', backend: 'db1' } as const;
    publishMessage(stranger, Subjects.bgdActions, {}, { ...action, actionId: 'stranger' });
    const monitor = createBus({ name: 'monitor', embedded: broker });
    applyBusIdentities(monitor, configWith({ bgd_monitor_seed: keys.bgd_monitor.seed }), ['bgd-monitor'], logger);
    publishMessage(monitor, Subjects.bgdActions, {}, { ...action, actionId: 'genuine' });
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(['genuine']);
    expect((await metrics.exposition()).body).toMatch(/dbproxy_bus_rejected_total\{[^}]*subject_kind="bgd_action"[^}]*reason="bad-signature"[^}]*\} 1/);
    expect(lines.join('')).toContain('bus message refused: sender not verified');
    expect(lines.join('')).not.toContain(keys.bgd_monitor.seed);
    unobserve();
    await Promise.all([receiver.close(), stranger.close(), monitor.close()]);
  });
});
