// Public entry point of protocol-mysql: a pure MySQL/MariaDB wire codec, server and client side.
// Named re-exports for what proxies read per packet or statement: compiled to CommonJS, `export *`
// makes one shared getter (`m[k]`, a megamorphic keyed load per access), a named one its own getter.
export { Capability, ServerStatus, hasFlag } from './capabilities';
export { Command } from './commands';
export * from './errors';
export * from './capabilities';
export * from './charsets';
export { PacketReader, PacketWriter, MAX_FRAME_PAYLOAD, encodeLenenc, lenencSize } from './cursor';
export * from './framing';
export * from './packets/headers';
export * from './packets/ok';
export * from './packets/err';
export * from './packets/eof';
export * from './packets/session-state';
export * from './packets/auth';
export * from './handshake';
export * from './handshake-response';
export * from './auth/native';
export * from './auth/caching-sha2';
export * from './auth/server-exchange';
export * from './auth/client-exchange';
export * from './column-types';
export * from './column';
export * from './binary-values';
export * from './text-values';
export * from './parameters';
export * from './commands';
export * from './stmt';
export * from './resultset';
export * from './response-tracker';
