// Public entry point of protocol-pg: the PostgreSQL v3 wire protocol, both directions, as pure functions over Buffers.
export * from './codes';
export * from './errors';
export { MessageReader, MessageWriter } from './cursor';
export { PgFramer, typedFrameAt, DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_MAX_STARTUP_SIZE } from './framer';
export type { Frame, FramePhase, FramerOptions, MessageListener } from './framer';

export type * from './frontend/messages';
export { decodeFrontendMessage, writeFrontendMessage, encodeFrontendMessages } from './frontend/codec';
export { FrontendDecoder, type FrontendDecoderOptions } from './frontend/decoder';
export { decodeStartupPacket } from './frontend/startup';
export {
  splitStartupOptions,
  joinStartupOptions,
  startupOptionSettings,
  takeStartupSetting,
  type TakenSetting,
} from './frontend/startup-options';

export type * from './backend/messages';
export { decodeBackendMessage, writeBackendMessage, encodeBackendMessages } from './backend/codec';
export { BackendDecoder, type BackendDecoderOptions } from './backend/decoder';
export {
  NoticeFieldCode,
  pgError,
  pgNotice,
  passwordAuthenticationFailed,
  type ErrorSeverity,
  type PgErrorInit,
} from './backend/notice';
export { SqlState, sqlStateForError } from './backend/sql-state';

export { defaultRandom, type RandomSource } from './random';
export {
  md5StoredPassword,
  isMd5StoredPassword,
  createMd5Salt,
  md5PasswordResponse,
  md5ResponseFromStored,
  verifyMd5Response,
  type Md5Credentials,
} from './md5';
export {
  SCRAM_SHA_256,
  DEFAULT_SCRAM_ITERATIONS,
  deriveScramKeys,
  parseScramVerifier,
  formatScramVerifier,
  scramVerifierFromPassword,
  scramSecretFrom,
  type ScramSecret,
  type ScramVerifierOptions,
} from './scram';
export { saslprepPassword } from './saslprep';
export { ScramServerSession, type ScramServerOptions, type ScramServerResult } from './scram-server';
export { ScramClientSession, type ScramClientOptions } from './scram-client';

export { PgTypeOid, type PgTypeName } from './types/oids';
export type { PgValue, TypeCodec } from './types/codec';
export { typeCodec, isSupportedType, decodeValue, encodeValue, transcodeValue, formatAt } from './types/registry';
