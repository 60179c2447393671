// The command table built from COMMAND INFO: handling by policy, flags, tips, subcommands,
// and key positions for servers that predate key specs.
import { CommandScanner, encodeCommand, type CommandInfo } from '@dbproxy/resp';
import { CommandFlag, Handling, RequestPolicy, ResponsePolicy } from './command-flags';
import { buildCommandTable } from './command-table';
import { KeyPositions } from './key-finder';

function info(name: string, flags: string[], extra: Partial<CommandInfo> = {}): CommandInfo {
  return { name, arity: -1, flags, firstKey: 0, lastKey: 0, step: 0, aclCategories: [], tips: [], keySpecs: [], subcommands: [], ...extra };
}

const keyed = { firstKey: 1, lastKey: 1, step: 1, keySpecs: [{ flags: ['RO'], beginSearch: { type: 'index' as const, index: 1 }, findKeys: { type: 'range' as const, lastKey: 0, keyStep: 1, limit: 0 } }] };

const table = buildCommandTable(
  [
    info('get', ['readonly', 'fast'], keyed),
    info('set', ['write', 'denyoom'], keyed),
    info('blpop', ['write', 'blocking'], keyed),
    info('ping', ['fast']),
    info('dbsize', ['readonly'], { tips: ['request_policy:all_shards', 'response_policy:agg_sum'] }),
    info('config', [], { subcommands: [info('config|get', ['admin', 'noscript'])] }),
    info('client', [], { subcommands: [info('client|list', ['admin']), info('client|setname', []), info('client|id', [])] }),
    info('cluster', [], { subcommands: [info('cluster|slots', [])] }),
    info('eval', ['noscript'], { aclCategories: ['@slow', '@scripting'], keySpecs: keyed.keySpecs }),
    info('legacy', ['write'], { firstKey: 1, lastKey: -1, step: 2 }),
    null,
  ],
  new Map(),
);

const spec = (...args: string[]) => {
  const batch = new CommandScanner().scan(encodeCommand(args));
  return { spec: table.get(batch, 0), batch };
};

describe('command table', () => {
  it('assigns each command its handling', () => {
    expect(spec('GET', 'k').spec?.handling).toBe(Handling.Forward);
    expect(spec('blpop', 'q', '0').spec?.handling).toBe(Handling.Blocking);
    expect(spec('PING').spec?.handling).toBe(Handling.Local);
    expect(spec('CONFIG', 'GET', 'x').spec?.handling).toBe(Handling.Administrative);
    expect(spec('client', 'LIST').spec?.handling).toBe(Handling.Rejected);
    expect(spec('CLIENT', 'SETNAME', 'n').spec?.handling).toBe(Handling.State);
    expect(spec('CLIENT', 'ID').spec?.handling).toBe(Handling.Local);
    expect(spec('CLUSTER', 'SLOTS').spec?.handling).toBe(Handling.ClusterCommand);
    expect(spec('NOPE').spec).toBeUndefined();
    expect(spec('CLIENT', 'NOPE').spec?.name).toBe('client');
  });

  it('keeps flags and the request and response policies of COMMAND INFO tips', () => {
    const dbsize = table.lookup('dbsize');
    expect(dbsize?.requestPolicy).toBe(RequestPolicy.AllShards);
    expect(dbsize?.responsePolicy).toBe(ResponsePolicy.AggSum);
    expect((table.lookup('set')?.flags ?? 0) & CommandFlag.Write).toBe(CommandFlag.Write);
    expect((table.lookup('eval')?.flags ?? 0) & CommandFlag.Script).toBe(CommandFlag.Script);
    expect(table.lookup('client|setname')?.display).toBe('CLIENT SETNAME');
    expect(table.size).toBe(10);
  });

  it('derives key positions from first/last/step where a server has no key specs', () => {
    const { spec: legacy, batch } = spec('LEGACY', 'a', '1', 'b', '2');
    const out = new KeyPositions();
    legacy?.keys.find(batch, 0, out);
    expect(Array.from(out.positions.subarray(0, out.count))).toEqual([1, 3]);
    expect(legacy?.keys.step).toBe(2);
  });
});
