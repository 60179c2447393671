import { CommandNameIndex } from './command-names';
import { CommandScanner } from './command-scanner';
import { encodeCommand } from './encoder';

describe('CommandNameIndex', () => {
  const names = ['GET', 'SET', 'MGET', 'CLUSTER', 'PING', 'SUBSCRIBE', 'EVALSHA', 'XREADGROUP', 'A', 'B1'];
  const index = new CommandNameIndex(names.map((name, i) => [name, i] as const));

  it('finds a scanned command name in place, ignoring case', () => {
    const batch = new CommandScanner().scan(Buffer.concat([encodeCommand(['get', 'k']), encodeCommand(['xReadGroup']), encodeCommand(['GETX'])]));
    expect([0, 1, 2].map((i) => index.get(batch.buffer, batch.offset(i, 0), batch.length(i, 0)))).toEqual([0, 7, undefined]);
  });

  it('looks up every name by string and misses unknown ones', () => {
    names.forEach((name, i) => expect(index.lookup(name.toLowerCase())).toBe(i));
    for (const miss of ['', 'GE', 'GETT', 'A1', 'b', 'SET ']) expect(index.lookup(miss)).toBeUndefined();
  });

  it('folds only letters', () => {
    const symbols = new CommandNameIndex([['a@', 1]]);
    expect(symbols.lookup('A@')).toBe(1);
    expect(symbols.lookup('A`')).toBeUndefined();
  });
});
