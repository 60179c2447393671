import { parseArgs } from './args';
import { DEFAULT_API_TOKEN, DEFAULT_API_URL, parseOperatorArgs } from './operator-args';

describe('operator command arguments', () => {
  it('defaults to the example configuration, then the environment, then the flags', () => {
    expect(parseOperatorArgs('status', [], {})).toMatchObject({ url: DEFAULT_API_URL, token: DEFAULT_API_TOKEN, json: false, requestTimeoutMs: 10_000 });
    const env = { DBPROXY_API_URL: 'http://api:9/', DBPROXY_API_TOKEN: 'from-env' };
    expect(parseOperatorArgs('status', [], env)).toMatchObject({ url: 'http://api:9', token: 'from-env' });
    expect(parseOperatorArgs('status', ['--url', 'http://x:1', '--token=t', '--json'], env)).toMatchObject({ url: 'http://x:1', token: 't', json: true });
  });

  it('takes the filters each command has and refuses the others', () => {
    expect(parseOperatorArgs('sessions', ['--edge', 'e1', '--protocol', 'mysql', '--user', 'app', '--backend', 'db1'], {})).toMatchObject({
      filters: { edge: 'e1', protocol: 'mysql', user: 'app', backend: 'db1' },
    });
    expect(parseOperatorArgs('pools', ['--user', 'app'], {})).toEqual({ kind: 'error', message: 'unknown option --user for pools' });
    expect(parseOperatorArgs('sessions', ['--protocol', 'oracle'], {})).toMatchObject({ kind: 'error', message: expect.stringContaining('--protocol must be one of') });
  });

  it('needs exactly one target for drain, pause and kill', () => {
    expect(parseOperatorArgs('drain', ['db1', '--protocol', 'postgres'], {})).toMatchObject({ verb: 'drain', target: 'db1', filters: { protocol: 'postgres' } });
    expect(parseOperatorArgs('drain', [], {})).toEqual({ kind: 'error', message: 'usage: dbproxy drain BACKEND' });
    expect(parseOperatorArgs('kill', ['s1', '--reason', 'runaway query'], {})).toMatchObject({ target: 's1', reason: 'runaway query' });
    expect(parseOperatorArgs('pause', ['e1', '--timeout', '30'], {})).toMatchObject({ target: 'e1', pauseSeconds: 30 });
    expect(parseOperatorArgs('pause', ['e1', '--timeout', '-1'], {})).toMatchObject({ kind: 'error' });
    expect(parseOperatorArgs('status', ['extra'], {})).toMatchObject({ kind: 'error' });
  });

  it('sends a bare dbproxy to usage (exit 2) and --version to the version', () => {
    expect(parseArgs([])).toEqual({ kind: 'usage' });
    expect(parseArgs(['--help'])).toEqual({ kind: 'help' });
    expect(parseArgs(['--version'])).toEqual({ kind: 'version' });
    expect(parseArgs(['top', '--interval', '0.5'])).toMatchObject({ kind: 'operator', verb: 'top', intervalMs: 500 });
  });
});
