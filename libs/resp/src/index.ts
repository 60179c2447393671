// Public entry point of resp: a zero-copy RESP2/RESP3 codec (scanners, decoder, encoders, interpreters).
export { RespType, CommandFlag, ReplyFlag } from './wire';
export type { RespTypeByte } from './wire';
export { DEFAULT_RESP_LIMITS, resolveLimits } from './limits';
export type { RespLimits } from './limits';
export {
  BadReplyLine, ExpectedBulk, IncompleteReply, InlineNul, InlineTooBig, InvalidBulkLength, InvalidLimit, InvalidMultibulkLength, MissingCrlf,
  NestingTooDeep, QueryBufferLimit, ReplyBufferLimit, TrailingBytes, UnbalancedQuotes, Unencodable, UnexpectedReplyShape, UnknownReplyType,
} from './errors';
export { argEquals, argToBuffer, argToInt, argToString } from './args';
export { CommandBatch } from './command-batch';
export { CommandScanner } from './command-scanner';
export { InlineReframer } from './inline-reframer';
export { CommandNameIndex } from './command-names';
export { ReplyBatch } from './reply-batch';
export { ReplyScanner } from './reply-scanner';
export { InputBuffer } from './input-buffer';
export type { NullForm, RespValue, RespValueType } from './value';
export { decodeReply } from './reply-decoder';
export { aggregateElements, readIntegerReply } from './reply-elements';
export { RespWriter } from './writer';
export type { CommandArg } from './writer';
export {
  encodeArray, encodeBulk, encodeCommand, encodedLength, encodeError, encodeInteger, encodeNull, encodeSimpleString, encodeValue,
} from './encoder';
export { parseRedirect, redirectOfReply } from './redirect';
export type { Redirect } from './redirect';
export { parseClusterShards, parseClusterSlots } from './cluster';
export type { ClusterNodeAddress, ClusterShard, ClusterShardNode, SlotRange } from './cluster';
export { parseCommandDocs, parseCommandInfo } from './command-info';
export type { BeginSearch, CommandArgumentDoc, CommandDoc, CommandInfo, FindKeys, KeySpec } from './command-info';
export { parsePubSub } from './pubsub';
export type { PubSubMessage, SubscriptionKind } from './pubsub';
