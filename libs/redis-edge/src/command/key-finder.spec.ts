// Key positions from COMMAND INFO key specs, checked against the positions Redis itself reports
// (COMMAND GETKEYS) for the commands whose specs are reproduced here.
import { CommandScanner, encodeCommand, type CommandDoc, type KeySpec } from '@dbproxy/resp';
import { compileKeyFinder, KeyPositions } from './key-finder';

const index = (i: number) => ({ type: 'index' as const, index: i });
const keyword = (word: string, startFrom: number) => ({ type: 'keyword' as const, keyword: word, startFrom });
const range = (lastKey: number, keyStep = 1, limit = 0) => ({ type: 'range' as const, lastKey, keyStep, limit });
const keynum = (keyNumIndex: number, firstKey: number, keyStep = 1) => ({ type: 'keynum' as const, keyNumIndex, firstKey, keyStep });
const spec = (beginSearch: KeySpec['beginSearch'], findKeys: KeySpec['findKeys']): KeySpec => ({ flags: [], beginSearch, findKeys });
const unknown: KeySpec = { flags: [], beginSearch: { type: 'unknown' }, findKeys: { type: 'unknown' } };

function keysOf(specs: KeySpec[], args: string[], doc?: CommandDoc): string[] {
  const batch = new CommandScanner().scan(encodeCommand(args));
  const out = new KeyPositions();
  const finder = compileKeyFinder(specs, doc);
  finder.find(batch, 0, out);
  return Array.from(out.positions.subarray(0, out.count), (k) => args[k]);
}

describe('key finder', () => {
  it('reads single keys, ranges with steps and keys counted by an argument', () => {
    expect(keysOf([spec(index(1), range(0))], ['GET', 'k'])).toEqual(['k']);
    expect(keysOf([spec(index(1), range(-1))], ['MGET', 'a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(keysOf([spec(index(1), range(-1, 2))], ['MSET', 'a', '1', 'b', '2'])).toEqual(['a', 'b']);
    expect(keysOf([spec(index(2), keynum(0, 1))], ['EVAL', 'return 1', '2', 'k1', 'k2', 'arg'])).toEqual(['k1', 'k2']);
    expect(keysOf([spec(index(2), keynum(0, 1))], ['EVAL', 'return 1', '0', 'arg'])).toEqual([]);
    // ZUNIONSTORE dest numkeys key...
    expect(keysOf([spec(index(1), range(0)), spec(index(2), keynum(0, 1))], ['ZUNIONSTORE', 'd', '2', 'x', 'y', 'WEIGHTS', '1', '2'])).toEqual(['d', 'x', 'y']);
    // BLMOVE src dst LEFT RIGHT timeout
    expect(keysOf([spec(index(1), range(0)), spec(index(2), range(0))], ['BLMOVE', 's', 'd', 'LEFT', 'RIGHT', '0'])).toEqual(['s', 'd']);
  });

  it('searches keywords forwards and backwards, with limits (XREAD, MIGRATE)', () => {
    const xread = [spec(keyword('STREAMS', 1), range(-1, 1, 2))];
    expect(keysOf(xread, ['XREAD', 'COUNT', '2', 'BLOCK', '0', 'streams', 's1', 's2', '0', '0'])).toEqual(['s1', 's2']);
    const migrate = [spec(index(3), range(0)), spec(keyword('KEYS', -2), range(-1))];
    expect(keysOf(migrate, ['MIGRATE', 'h', '1', 'k', '0', '100'])).toEqual(['k']);
    expect(keysOf(migrate, ['MIGRATE', 'h', '1', '', '0', '100', 'KEYS', 'a', 'b'])).toEqual(['', 'a', 'b']);
  });

  it('resolves an unknown begin_search from COMMAND DOCS tokens, and treats pattern specs as complete', () => {
    const doc: CommandDoc = {
      docFlags: [],
      subcommands: new Map(),
      arguments: [
        { name: 'key', type: 'key', keySpecIndex: 0, flags: [], arguments: [] },
        { name: 'pattern', type: 'pattern', keySpecIndex: 1, token: 'BY', flags: ['optional'], arguments: [] },
        { name: 'destination', type: 'key', keySpecIndex: 2, token: 'STORE', flags: ['optional'], arguments: [] },
      ],
    };
    const sort = [spec(index(1), range(0)), unknown, unknown];
    expect(keysOf(sort, ['SORT', 'list', 'BY', 'w_*', 'STORE', 'dest'], doc)).toEqual(['list', 'dest']);
    expect(keysOf(sort, ['SORT', 'store', 'ALPHA', 'store', 'other'], doc)).toEqual(['store', 'other']);
    expect(compileKeyFinder(sort, doc).complete).toBe(true);
    expect(compileKeyFinder([spec(index(1), range(0)), unknown], undefined).complete).toBe(false);
  });

  it('finds nothing where the arguments are too few (the server reports the arity error)', () => {
    expect(keysOf([spec(index(1), range(0))], ['GET'])).toEqual([]);
    expect(keysOf([spec(index(1), range(-1, 2))], ['MSET'])).toEqual([]);
    expect(keysOf([spec(index(2), keynum(0, 1))], ['EVAL', 'x', 'notanumber', 'k'])).toEqual([]);
    expect(keysOf([spec(index(2), keynum(0, 1))], ['EVAL', 'x', '3', 'k'])).toEqual([]);
  });

  it('reports the key step of the first spec for splitting (MSET pairs)', () => {
    expect(compileKeyFinder([spec(index(1), range(-1, 2))], undefined).step).toBe(2);
    expect(compileKeyFinder([spec(index(1), range(-1))], undefined).step).toBe(1);
    expect(compileKeyFinder([], undefined).empty).toBe(true);
  });
});
