import { parseRedirect, redirectOfReply } from './redirect';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

describe('parseRedirect', () => {
  it('parses MOVED and ASK into slot, host and port', () => {
    expect(parseRedirect('MOVED 12182 127.0.0.1:17002')).toEqual({ kind: 'moved', slot: 12182, host: '127.0.0.1', port: 17002 });
    expect(parseRedirect('ASK 0 redis-2.example:6379')).toEqual({ kind: 'ask', slot: 0, host: 'redis-2.example', port: 6379 });
  });

  it('splits IPv6 endpoints at the last colon and keeps an unknown (empty) endpoint empty', () => {
    expect(parseRedirect('MOVED 16383 ::1:7000')).toEqual({ kind: 'moved', slot: 16383, host: '::1', port: 7000 });
    expect(parseRedirect('MOVED 5 :7000')).toEqual({ kind: 'moved', slot: 5, host: '', port: 7000 });
  });

  it('recognises TRYAGAIN and CLUSTERDOWN', () => {
    const tryagain = 'TRYAGAIN Multiple keys request during rehashing of slot';
    expect(parseRedirect(tryagain)).toEqual({ kind: 'tryagain', message: tryagain });
    expect(parseRedirect('CLUSTERDOWN The cluster is down')).toEqual({ kind: 'clusterdown', message: 'CLUSTERDOWN The cluster is down' });
  });

  it('returns undefined for other or malformed errors', () => {
    for (const message of ['ERR wrong', 'MOVED 16384 h:1', 'MOVED x h:1', 'MOVED 1 h', 'MOVED 1 h:99999', 'ASK 1', 'moved 1 h:1']) {
      expect(parseRedirect(message)).toBeUndefined();
    }
  });
});

describe('redirectOfReply', () => {
  it('reads the redirect from a scanned error frame', () => {
    const buf = b('+OK\r\n-MOVED 3999 127.0.0.1:6381\r\n');
    expect(redirectOfReply(buf, 5, buf.length)).toEqual({ kind: 'moved', slot: 3999, host: '127.0.0.1', port: 6381 });
    expect(redirectOfReply(b('-ASK 1 h:2\r\n'), 0, 12)).toEqual({ kind: 'ask', slot: 1, host: 'h', port: 2 });
    expect(redirectOfReply(b('-TRYAGAIN x\r\n'), 0, 13)).toEqual({ kind: 'tryagain', message: 'TRYAGAIN x' });
  });

  it('ignores other errors and non-error replies', () => {
    expect(redirectOfReply(b('-ERR x\r\n'), 0, 8)).toBeUndefined();
    expect(redirectOfReply(b('+MOVED 1 h:1\r\n'), 0, 14)).toBeUndefined();
    expect(redirectOfReply(b('-MOVE\r\n'), 0, 7)).toBeUndefined();
  });
});
