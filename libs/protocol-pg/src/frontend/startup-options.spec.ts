import fc from 'fast-check';
import type { StartupMessage } from './messages';
import { joinStartupOptions, splitStartupOptions, startupOptionSettings, takeStartupSetting } from './startup-options';

const startup = (entries: [string, string][]): StartupMessage => ({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map(entries) });

describe('startup options', () => {
  it('splits on whitespace with backslash escapes, like the server', () => {
    expect(splitStartupOptions('  -c a=1\t--b-c=x\\ y  -c\\\\z ')).toEqual(['-c', 'a=1', '--b-c=x y', '-c\\z']);
    expect(splitStartupOptions('')).toEqual([]);
    expect(splitStartupOptions('a\\')).toEqual(['a']);
  });

  it('joins arguments so that splitting gives them back (property)', () => {
    const arg = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
    fc.assert(fc.property(fc.array(arg, { maxLength: 6 }), (args) => expect(splitStartupOptions(joinStartupOptions(args))).toEqual(args)));
  });

  it('finds -c, -cname and --name settings, normalising case and dashes', () => {
    const settings = startupOptionSettings(splitStartupOptions('-c DbProxy.Shard=eu -cwork_mem=4MB --search-path=a,b -x'));
    expect(settings.map(({ name, value }) => [name, value])).toEqual([
      ['dbproxy.shard', 'eu'],
      ['work_mem', '4MB'],
      ['search_path', 'a,b'],
    ]);
  });
});

describe('takeStartupSetting', () => {
  it('takes a direct parameter and leaves the rest in order', () => {
    const taken = takeStartupSetting(startup([['user', 'u'], ['dbproxy.shard', 'eu'], ['database', 'd']]), 'dbproxy.shard');
    expect(taken.value).toBe('eu');
    expect([...taken.message.parameters]).toEqual([['user', 'u'], ['database', 'd']]);
  });

  it('takes the setting out of options and keeps other options', () => {
    const taken = takeStartupSetting(startup([['user', 'u'], ['options', '-c dbproxy.shard=us\\ east -c search_path=x']]), 'dbproxy.shard');
    expect(taken.value).toBe('us east');
    expect(taken.message.parameters.get('options')).toBe('-c search_path=x');
  });

  it('drops options entirely when nothing else was in it', () => {
    const taken = takeStartupSetting(startup([['user', 'u'], ['options', '--dbproxy.shard=eu']]), 'dbproxy.shard');
    expect(taken.value).toBe('eu');
    expect(taken.message.parameters.has('options')).toBe(false);
  });

  it('prefers the direct parameter over options, as the server applies them in that order', () => {
    const taken = takeStartupSetting(startup([['options', '-c dbproxy.shard=a'], ['dbproxy.shard', 'b']]), 'dbproxy.shard');
    expect(taken.value).toBe('b');
    expect(taken.message.parameters.size).toBe(0);
  });

  it('returns undefined and an unchanged parameter list when absent', () => {
    const message = startup([['user', 'u'], ['options', '-c a=1']]);
    const taken = takeStartupSetting(message, 'dbproxy.shard');
    expect(taken.value).toBeUndefined();
    expect(taken.message.parameters).toEqual(message.parameters);
  });
});
