import { peerAddress, sessionCloseKind } from './operational-events';

describe('sessionCloseKind', () => {
  it.each([
    ['COM_QUIT', 'client_quit'],
    ['client closed the connection', 'client_quit'],
    ['client terminated', 'client_quit'],
    ['client quit (QUIT)', 'client_quit'],
    ['killed', 'killed'],
    ['Connection was killed', 'killed'],
    ['draining', 'shutdown'],
    ['shutdown', 'shutdown'],
    ['client read timeout', 'timeout'],
    ['idle for proxy.client_read_timeout_seconds', 'timeout'],
    ['pinned backend connection lost', 'error'],
    ['backend closed', 'error'],
  ])('%s → %s', (detail, kind) => expect(sessionCloseKind(detail)).toBe(kind));

  it('writes IPv6 peers in brackets', () => {
    expect(peerAddress({ remoteAddress: '::1', remotePort: 5 })).toBe('[::1]:5');
    expect(peerAddress({ remoteAddress: undefined })).toBe('unknown');
  });
});
