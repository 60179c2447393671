// The resp error registry: every protocol error a scanner, decoder or encoder can raise.
import { createError } from '@dbproxy/util';

// Messages match Redis's own replies (networking.c) where Redis has one, so clients behind
// the proxy see the text they would see from the server.
export const InvalidMultibulkLength = createError('DBP_ERR_RESP_INVALID_MULTIBULK_LENGTH', 'Protocol error: invalid multibulk length');
export const InvalidBulkLength = createError('DBP_ERR_RESP_INVALID_BULK_LENGTH', 'Protocol error: invalid bulk length');
export const ExpectedBulk = createError<[string]>('DBP_ERR_RESP_EXPECTED_BULK', "Protocol error: expected '$', got '%s'");
export const UnbalancedQuotes = createError('DBP_ERR_RESP_UNBALANCED_QUOTES', 'Protocol error: unbalanced quotes in request');
export const InlineTooBig = createError('DBP_ERR_RESP_INLINE_TOO_BIG', 'Protocol error: too big inline request');
// Redis reads an inline line with strchr, so a NUL hides the line's end: the connection waits
// (until 64 KiB arrive, then "too big inline request"). The proxy refuses it at once instead.
export const InlineNul = createError('DBP_ERR_RESP_INLINE_NUL', 'Protocol error: NUL byte in inline request');
export const MissingCrlf = createError('DBP_ERR_RESP_MISSING_CRLF', "Protocol error: expected '\\r\\n' after bulk data");
export const QueryBufferLimit = createError<[number, number]>(
  'DBP_ERR_RESP_QUERY_BUFFER_LIMIT',
  'Protocol error: pending request of %d bytes exceeds the query buffer limit of %d bytes',
);
// Reply-side messages follow hiredis, which is what most Redis clients report.
export const UnknownReplyType = createError<[string]>('DBP_ERR_RESP_UNKNOWN_REPLY_TYPE', 'Protocol error, got "%s" as reply type byte');
export const BadReplyLine = createError<[string]>('DBP_ERR_RESP_BAD_REPLY_LINE', 'Protocol error: bad %s line');
export const NestingTooDeep = createError<[number]>('DBP_ERR_RESP_NESTING_TOO_DEEP', 'Protocol error: reply nested deeper than %d levels');
export const ReplyBufferLimit = createError<[number, number]>(
  'DBP_ERR_RESP_REPLY_BUFFER_LIMIT',
  'Protocol error: pending reply of %d bytes exceeds the reply buffer limit of %d bytes',
);
export const IncompleteReply = createError('DBP_ERR_RESP_INCOMPLETE_REPLY', 'Protocol error: incomplete reply');
export const TrailingBytes = createError<[number]>('DBP_ERR_RESP_TRAILING_BYTES', 'Protocol error: %d unexpected bytes after the reply');
export const Unencodable = createError<[string]>('DBP_ERR_RESP_UNENCODABLE', 'cannot encode as RESP: %s');
export const UnexpectedReplyShape = createError<[string, string]>('DBP_ERR_RESP_UNEXPECTED_REPLY_SHAPE', 'unexpected %s reply: %s');
export const InvalidLimit = createError<[string, string]>('DBP_ERR_RESP_INVALID_LIMIT', 'invalid RESP limit %s: %s');

/** A byte as Redis prints it with %c in an error, CR and LF replaced by spaces as Redis does. */
export function printableByte(byte: number): string {
  return byte === 0x0d || byte === 0x0a ? ' ' : String.fromCharCode(byte);
}
