// Which startup parameters transaction mode tracks, how `options` is read, and the SQL that moves a
// pooled connection from one session's settings to another's.
import type { StartupMessage } from '@dbproxy/protocol-pg';
import { settingsChange, startupSettings } from './startup-parameters';

const startup = (parameters: Record<string, string>): StartupMessage => ({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map(Object.entries(parameters)) });

describe('startupSettings', () => {
  it('tracks direct parameters and -c / --name settings of options, a direct one winning, in PostgreSQL\'s spelling', () => {
    const result = startupSettings(startup({ user: 'u', database: 'd', timezone: 'UTC', options: '-c TimeZone=Asia/Tokyo --statement-timeout=5s -csearch_path=a,b\\ c' }), []);
    expect(result).toEqual({
      ok: true,
      settings: new Map([
        ['TimeZone', 'UTC'],
        ['statement_timeout', '5s'],
        ['search_path', 'a,b c'],
        ['application_name', ''],
      ]),
    });
  });

  it('uses fallback_application_name when there is no application_name', () => {
    const result = startupSettings(startup({ user: 'u', fallback_application_name: 'pgbench' }), []);
    expect(result.ok && result.settings.get('application_name')).toBe('pgbench');
  });

  it('refuses unknown direct parameters unless ignored, and options switches that are no setting', () => {
    expect(startupSettings(startup({ user: 'u', work_mem: '1MB' }), [])).toMatchObject({ ok: false, error: { code: 'DBP_ERR_PGEDGE_STARTUP_PARAMETER_UNKNOWN' } });
    expect(startupSettings(startup({ user: 'u', Work_Mem: '1MB', options: '-c work_mem=1MB' }), ['WORK_MEM'])).toMatchObject({ ok: true });
    expect(startupSettings(startup({ user: 'u', options: '-e' }), [])).toMatchObject({ ok: false, error: { code: 'DBP_ERR_PGEDGE_STARTUP_PARAMETER' } });
    expect(startupSettings(startup({ user: 'u', options: '-e -c work_mem=1' }), ['options'])).toMatchObject({ ok: true });
  });
});

describe('startupSettings: options', () => {
  it('tracks every setting in options, as -c name=value and as --name=value (dashes read as underscores)', () => {
    const result = startupSettings(startup({ user: 'u', options: '-c work_mem=1MB --default-transaction-isolation=serializable -cmyapp.tenant=7 --TimeZone=UTC' }), []);
    expect(result.ok && [...result.settings]).toEqual([
      ['work_mem', '1MB'],
      ['default_transaction_isolation', 'serializable'],
      ['myapp.tenant', '7'],
      ['TimeZone', 'UTC'],
      ['application_name', ''],
    ]);
  });

  it('refuses a setting name PostgreSQL could not have (it would reach the pooled connection as SQL), and skips ignored ones', () => {
    expect(startupSettings(startup({ user: 'u', options: '-c work_mem;select=1' }), [])).toMatchObject({ ok: false, error: { code: 'DBP_ERR_PGEDGE_STARTUP_PARAMETER_UNKNOWN' } });
    expect(startupSettings(startup({ user: 'u', options: '--1abc=2' }), [])).toMatchObject({ ok: false });
    const ignored = startupSettings(startup({ user: 'u', options: '-c geqo=off -c work_mem=2MB' }), ['geqo']);
    expect(ignored.ok && [...ignored.settings.keys()]).toEqual(['work_mem', 'application_name']);
  });
});

describe('settingsChange', () => {
  it('sets what differs, resets what the next session leaves at its default, and is nothing when equal', () => {
    const from = new Map([
      ['application_name', 'a'],
      ['statement_timeout', '5s'],
    ]);
    const to = new Map([
      ['application_name', "it's"],
      ['search_path', 'x\\y'],
    ]);
    expect(settingsChange(from, to)).toBe("SELECT set_config(E'application_name', E'it''s', false), set_config(E'search_path', E'x\\\\y', false); RESET statement_timeout");
    expect(settingsChange(to, new Map(to))).toBeUndefined();
  });
});
