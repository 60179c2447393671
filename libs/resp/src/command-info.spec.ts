import { parseCommandDocs, parseCommandInfo } from './command-info';
import { decodeReply } from './reply-decoder';

// Captured from Redis 7.0: COMMAND INFO GET (RESP2), COMMAND INFO SET and COMMAND DOCS GET (RESP3).
const INFO_GET_RESP2 =
  '*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n' +
  '$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n' +
  '$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n';
const INFO_SET_RESP3 =
  '*1\r\n*10\r\n$3\r\nset\r\n:-3\r\n~2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@write\r\n+@string\r\n+@slow\r\n~0\r\n~1\r\n%4\r\n' +
  '$5\r\nnotes\r\n$48\r\nRW and ACCESS due to the optional `GET` argument\r\n$5\r\nflags\r\n~4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n' +
  '$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n' +
  '$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n';
const DOCS_GET_RESP3 =
  '%1\r\n$3\r\nget\r\n%5\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n' +
  '$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n';

const decode = (s: string) => decodeReply(Buffer.from(s, 'latin1'));

describe('parseCommandInfo', () => {
  it('reads arity, flags, key positions and key specs (RESP2)', () => {
    expect(parseCommandInfo(decode(INFO_GET_RESP2))).toEqual([
      {
        name: 'get', arity: 2, flags: ['readonly', 'fast'], firstKey: 1, lastKey: 1, step: 1,
        aclCategories: ['@read', '@string', '@fast'], tips: [],
        keySpecs: [{ flags: ['RO', 'access'], beginSearch: { type: 'index', index: 1 }, findKeys: { type: 'range', lastKey: 0, keyStep: 1, limit: 0 } }],
        subcommands: [],
      },
    ]);
  });

  it('reads RESP3 sets and maps the same way, with key spec notes', () => {
    const [set] = parseCommandInfo(decode(INFO_SET_RESP3));
    expect(set).toMatchObject({ name: 'set', arity: -3, flags: ['write', 'denyoom'], aclCategories: ['@write', '@string', '@slow'] });
    expect(set?.keySpecs[0]).toEqual({
      flags: ['RW', 'access', 'update', 'variable_flags'],
      beginSearch: { type: 'index', index: 1 },
      findKeys: { type: 'range', lastKey: 0, keyStep: 1, limit: 0 },
      notes: 'RW and ACCESS due to the optional `GET` argument',
    });
  });

  it('returns null for unknown commands and reads keyword/keynum specs and subcommands', () => {
    const spec = '*6\r\n$5\r\nflags\r\n*0\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$7\r\nkeyword\r\n$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$7\r\nSTREAMS\r\n$9\r\nstartfrom\r\n:1\r\n' +
      '$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n';
    const sub = '*10\r\n$6\r\nx|help\r\n:2\r\n*0\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*0\r\n*0\r\n';
    const text = `*2\r\n*-1\r\n*10\r\n$1\r\nx\r\n:-2\r\n*0\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*1\r\n${spec}*1\r\n${sub}`;
    const [unknown, x] = parseCommandInfo(decode(text));
    expect(unknown).toBeNull();
    expect(x?.keySpecs[0].beginSearch).toEqual({ type: 'keyword', keyword: 'STREAMS', startFrom: 1 });
    expect(x?.keySpecs[0].findKeys).toEqual({ type: 'keynum', keyNumIndex: 0, firstKey: 1, keyStep: 1 });
    expect(x?.subcommands.map((s) => s.name)).toEqual(['x|help']);
  });

  it('reads pre-7 entries that stop after the key step', () => {
    const [info] = parseCommandInfo(decode('*1\r\n*6\r\n$3\r\nget\r\n:2\r\n*1\r\n+readonly\r\n:1\r\n:1\r\n:1\r\n'));
    expect(info).toMatchObject({ name: 'get', aclCategories: [], keySpecs: [], subcommands: [] });
  });

  it('rejects a truncated entry with a typed error', () => {
    expect(() => parseCommandInfo(decode('*1\r\n*2\r\n$3\r\nget\r\n:2\r\n'))).toThrow(expect.objectContaining({ code: 'DBP_ERR_RESP_UNEXPECTED_REPLY_SHAPE' }));
  });
});

describe('parseCommandDocs', () => {
  it('reads summary, group, complexity and arguments', () => {
    const docs = parseCommandDocs(decode(DOCS_GET_RESP3));
    expect([...docs.keys()]).toEqual(['get']);
    expect(docs.get('get')).toEqual({
      summary: 'Get the value of a key', since: '1.0.0', group: 'string', complexity: 'O(1)', docFlags: [],
      arguments: [{ name: 'key', type: 'key', keySpecIndex: 0, flags: [], arguments: [] }],
      subcommands: new Map(),
    });
  });
});
