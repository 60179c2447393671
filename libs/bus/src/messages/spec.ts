// Subject and KV-key templates with typed parameters: `dbproxy.health.{protocol}.{backend}`
// builds subjects, wildcard patterns, and reads the parameters back from a received subject.
import { Buffer } from 'node:buffer';
import type { z } from 'zod';
import { BusErrors } from '../errors';
import type { SignedKind } from '../identity/bus-identities';

const TOKEN_SAFE = /^[A-Za-z0-9_-]$/;

/**
 * Makes any non-empty value one token valid both in a subject and in a KV key: bytes outside
 * `[A-Za-z0-9_-]` become `=HH` (so backend `db.1` is the token `db=2E1`).
 */
export function encodeToken(value: string): string {
  if (value.length === 0) throw BusErrors.invalidSubject('subject parameter', value);
  let out = '';
  for (const ch of value) {
    if (TOKEN_SAFE.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeToken(token: string): string {
  if (!token.includes('=')) return token;
  const bytes: number[] = [];
  let rest = token;
  // Decode runs of escapes as UTF-8 byte sequences, literal characters as themselves.
  while (rest.length > 0) {
    const m = /^=([0-9A-F]{2})/.exec(rest);
    if (m) {
      bytes.push(parseInt(m[1] as string, 16));
      rest = rest.slice(3);
    } else {
      bytes.push(...Buffer.from(rest[0] as string, 'utf8'));
      rest = rest.slice(1);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

type ParamNames<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | ParamNames<Rest> : never;

/** The parameters a template needs, e.g. `{ protocol: string; backend: string }`. */
export type TemplateParams<T extends string> = { readonly [K in ParamNames<T>]: string };

type TemplateToken = { readonly literal: string } | { readonly param: string };

/** A template split into literal tokens and `{param}` tokens. */
export class SubjectTemplate<T extends string> {
  private readonly tokens: readonly TemplateToken[];

  constructor(readonly template: T) {
    this.tokens = template.split('.').map((t) => (t.startsWith('{') && t.endsWith('}') ? { param: t.slice(1, -1) } : { literal: t }));
  }

  /** A literal subject; parameters are escaped with encodeToken (any non-empty value works). */
  fill(params: TemplateParams<T>): string {
    const values = params as Readonly<Record<string, string>>;
    return this.tokens.map((t) => ('literal' in t ? t.literal : encodeToken(values[t.param] ?? ''))).join('.');
  }

  /** A subscription pattern: parameters not given become `*`. */
  pattern(params: Partial<TemplateParams<T>> = {}): string {
    const values = params as Readonly<Partial<Record<string, string>>>;
    return this.tokens
      .map((t) => {
        if ('literal' in t) return t.literal;
        const value = values[t.param];
        return value === undefined ? '*' : encodeToken(value);
      })
      .join('.');
  }

  /** The parameters of a subject made from this template, or undefined when it does not fit. */
  parse(subject: string): TemplateParams<T> | undefined {
    const parts = subject.split('.');
    if (parts.length !== this.tokens.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const token = this.tokens[i] as TemplateToken;
      const part = parts[i] as string;
      if ('literal' in token) {
        if (token.literal !== part) return undefined;
      } else {
        params[token.param] = decodeToken(part);
      }
    }
    return params as TemplateParams<T>;
  }
}

/** A message type on a subject family: template, schema and version. */
export interface MessageSpec<T extends string = string, S extends z.ZodTypeAny = z.ZodTypeAny> {
  readonly name: string;
  readonly subject: SubjectTemplate<T>;
  readonly version: number;
  readonly schema: S;
  /** Set for messages that change placement or data: only this service may send them, signed. */
  readonly signed?: SignedKind;
  /** Pattern for subscribeMessages; omitted parameters match any value. */
  pattern(params?: Partial<TemplateParams<T>>): SubjectPattern<T, S>;
}

/** A request/reply pair: the request is a MessageSpec, the reply has its own schema and version. */
export interface RequestSpec<T extends string = string, Q extends z.ZodTypeAny = z.ZodTypeAny, R extends z.ZodTypeAny = z.ZodTypeAny>
  extends MessageSpec<T, Q> {
  readonly reply: { readonly version: number; readonly schema: R; readonly signed?: SignedKind };
  pattern(params?: Partial<TemplateParams<T>>): RequestPattern<T, Q, R>;
}

export interface SubjectPattern<T extends string, S extends z.ZodTypeAny> {
  readonly spec: MessageSpec<T, S>;
  readonly pattern: string;
}

export interface RequestPattern<T extends string, Q extends z.ZodTypeAny, R extends z.ZodTypeAny> {
  readonly spec: RequestSpec<T, Q, R>;
  readonly pattern: string;
}

/** A typed KV record: bucket, key template, schema and version. */
export interface RecordSpec<T extends string = string, S extends z.ZodTypeAny = z.ZodTypeAny> {
  readonly name: string;
  readonly bucket: string;
  readonly key: SubjectTemplate<T>;
  readonly version: number;
  readonly schema: S;
  /** Revisions the bucket keeps per key; everyone opens the bucket with the same value. */
  readonly history: number;
  /** Set for records only one service may write, signed. */
  readonly signed?: SignedKind;
}

export function defineMessage<T extends string, S extends z.ZodTypeAny>(name: string, template: T, version: number, schema: S, signed?: SignedKind): MessageSpec<T, S> {
  const subject = new SubjectTemplate(template);
  const spec: MessageSpec<T, S> = { name, subject, version, schema, ...(signed ? { signed } : {}), pattern: (params) => ({ spec, pattern: subject.pattern(params) }) };
  return Object.freeze(spec);
}

export function defineRequest<T extends string, Q extends z.ZodTypeAny, R extends z.ZodTypeAny>(
  name: string,
  template: T,
  request: { version: number; schema: Q; signed?: SignedKind },
  reply: { version: number; schema: R; signed?: SignedKind },
): RequestSpec<T, Q, R> {
  const subject = new SubjectTemplate(template);
  const spec: RequestSpec<T, Q, R> = {
    name,
    subject,
    version: request.version,
    schema: request.schema,
    ...(request.signed ? { signed: request.signed } : {}),
    reply: Object.freeze({ ...reply }),
    pattern: (params) => ({ spec, pattern: subject.pattern(params) }),
  };
  return Object.freeze(spec);
}

export function defineRecord<T extends string, S extends z.ZodTypeAny>(
  name: string,
  bucket: string,
  keyTemplate: T,
  version: number,
  schema: S,
  history = 1,
  signed?: SignedKind,
): RecordSpec<T, S> {
  return Object.freeze({ name, bucket, key: new SubjectTemplate(keyTemplate), version, schema, history, ...(signed ? { signed } : {}) });
}
