// Subject, pattern, KV name and header syntax shared by both buses, so both accept and
// match exactly the same things (NATS rules: `.`-separated tokens, `*` one token, `>` the tail).
import { BusErrors } from './errors';

const WHITESPACE = /[\s]/;
const KV_KEY = /^[-/_=.a-zA-Z0-9]+$/;
const KV_BUCKET = /^[-_a-zA-Z0-9]+$/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function tokensOf(text: string, what: string, wildcards: boolean): string[] {
  if (text.length === 0 || WHITESPACE.test(text)) throw BusErrors.invalidSubject(what, text);
  const tokens = text.split('.');
  tokens.forEach((token, i) => {
    if (token.length === 0) throw BusErrors.invalidSubject(what, text);
    const wild = token === '*' || token === '>';
    if (wild && !wildcards) throw BusErrors.invalidSubject(what, text);
    if (!wild && (token.includes('*') || token.includes('>'))) throw BusErrors.invalidSubject(what, text);
    if (token === '>' && i !== tokens.length - 1) throw BusErrors.invalidSubject(what, text);
  });
  return tokens;
}

/** Throws DBP_ERR_BUS_INVALID_SUBJECT unless `subject` is a literal subject (no wildcards). */
export function assertSubject(subject: string): void {
  tokensOf(subject, 'subject', false);
}

/** Throws DBP_ERR_BUS_INVALID_SUBJECT unless `pattern` is a subject, wildcards allowed. */
export function assertPattern(pattern: string): void {
  tokensOf(pattern, 'subject pattern', true);
}

/** True when the literal `subject` matches `pattern` under NATS wildcard rules. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

export function assertBucket(bucket: string): void {
  if (!KV_BUCKET.test(bucket)) throw BusErrors.invalidSubject('kv bucket', bucket);
}

function assertKvName(key: string, what: string, wildcards: boolean): void {
  tokensOf(key, what, wildcards);
  for (const token of key.split('.')) {
    if (token !== '*' && token !== '>' && !KV_KEY.test(token)) throw BusErrors.invalidSubject(what, key);
  }
}

export function assertKey(key: string): void {
  assertKvName(key, 'kv key', false);
}

export function assertKeyPattern(pattern: string): void {
  assertKvName(pattern, 'kv key pattern', true);
}

/** Throws DBP_ERR_BUS_INVALID_HEADER for names or values NATS headers cannot carry. */
export function assertHeaders(headers: Record<string, string> | undefined): void {
  if (!headers) return;
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw BusErrors.invalidHeader(JSON.stringify(name));
    if (typeof value !== 'string' || /[\r\n]/.test(value)) throw BusErrors.invalidHeader(`${name} (value)`);
  }
}
