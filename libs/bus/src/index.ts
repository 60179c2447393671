// Public entry point of @dbproxy/bus: the bus interface, its NATS and embedded implementations,
// the subject catalogue with typed message schemas, and the typed publish/subscribe helpers.
export type * from './types';
export { createBus, BusDefaults, EmbeddedBroker, sharedEmbeddedBroker, type CreateBusOptions } from './create-bus';
export { BusErrors } from './errors';
export type { NatsAuth, NatsTls } from './nats/connect-options';
export { droppedMessageCounts, type BusMessageDropped, type DropReason } from './diagnostics';
export { subjectMatches, assertSubject, assertPattern } from './subjects';
export { ErrorReplyHeaders } from './delivery';
export { MAX_KV_HISTORY } from './kv-options';
export * from './messages/schemas';
export { Subjects, KvRecords } from './messages/catalogue';
export { SubjectTemplate, defineMessage, defineRequest, defineRecord, encodeToken, decodeToken } from './messages/spec';
export type { TemplateParams, MessageSpec, RequestSpec, RecordSpec, SubjectPattern, RequestPattern } from './messages/spec';
export { encodeMessage, decodeMessage, type Decoded } from './messages/codec';
export { publishMessage, subscribeMessages, requestMessage, serveMessages, type MessageMeta } from './messages/typed-bus';
export { openRecords, type RecordStore, type TypedRecord } from './messages/typed-records';
export { SignedKinds, SIGNING_SERVICES } from './messages/catalogue';
export { BusIdentities, type BusIdentityOptions, type SignedKind } from './identity/bus-identities';
export { useIdentities, identitiesOf, DEFAULT_SIGNED_MAX_AGE_MS } from './identity/binding';
export { generateServiceKey, signingKeyFromSeed } from './identity/service-keys';
export { rejectedMessageCounts, REJECT_REASONS, type BusMessageRejected, type RejectReason } from './identity/rejections';
