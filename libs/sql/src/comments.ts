// Reads sqlcommenter key='value' pairs from comments: W3C trace context and dbproxy routing hints.

/** Routing hints a client may put in a comment: `/*dbproxy_route='primary',dbproxy_shard='s1'*\/`. */
export interface RoutingHints {
  /** Force the primary, or allow a replica for a statement that is replica-safe anyway. */
  readonly route?: 'primary' | 'replica';
  /** Run on this shard when the statement has no shard key (or confirm the key's shard). */
  readonly shard?: string;
}

/** What the comments of one statement carried. */
export interface CommentContext {
  traceparent?: string;
  tracestate?: string;
  hints: RoutingHints;
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Comment text without its delimiters. */
function commentBody(text: string, start: number, end: number): string {
  const c = text.charCodeAt(start);
  if (c === 0x2f) return text.slice(start + 2, end - 2); // /* */
  if (c === 0x23) return text.slice(start + 1, end); // #
  return text.slice(start + 2, end); // --
}

function decodeValue(raw: string): string {
  const unescaped = raw.replace(/\\'/g, "'");
  try {
    return decodeURIComponent(unescaped);
  } catch {
    return unescaped;
  }
}

/** True when text[start, end) holds `='`, the only comments worth parsing. */
export function mayCarryTags(text: string, start: number, end: number): boolean {
  for (let i = start; i < end - 1; i++) if (text.charCodeAt(i) === 0x3d && text.charCodeAt(i + 1) === 0x27) return true;
  return false;
}

const PAIR = /\s*([A-Za-z0-9_.-]+)\s*=\s*'((?:[^'\\]|\\.)*)'\s*(?:,|$)/gy;

/** Merges the sqlcommenter tags of comment text[start, end) into `into`. */
export function readCommentTags(text: string, start: number, end: number, into: CommentContext): void {
  const body = commentBody(text, start, end).trim();
  PAIR.lastIndex = 0;
  let hints: { route?: 'primary' | 'replica'; shard?: string } | undefined;
  for (let m = PAIR.exec(body); m !== null; m = PAIR.exec(body)) {
    const key = m[1].toLowerCase();
    const value = decodeValue(m[2]);
    if (key === 'traceparent' && TRACEPARENT.test(value) && !/^[0-9a-f]{2}-0{32}-/.test(value)) into.traceparent = value;
    else if (key === 'tracestate') into.tracestate = value;
    else if (key === 'dbproxy_route' && (value === 'primary' || value === 'replica')) (hints ??= { ...into.hints }).route = value;
    else if (key === 'dbproxy_shard' && value.length > 0) (hints ??= { ...into.hints }).shard = value;
    if (PAIR.lastIndex >= body.length) break;
  }
  if (hints !== undefined) into.hints = hints;
}
