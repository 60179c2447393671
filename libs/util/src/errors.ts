// The error registry: every library defines its errors here with a unique, documented code.
import { format } from 'node:util';

/** An error raised by dbproxy code; `code` is stable and documented in docs/errors.md. */
export class DbproxyError extends Error {
  readonly code: string;
  readonly args: readonly unknown[];

  constructor(code: string, message: string, args: readonly unknown[], options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DbproxyError';
    this.code = code;
    this.args = args;
  }
}

export interface ErrorDefinition<A extends unknown[]> {
  readonly code: string;
  readonly template: string;
  (...args: A): DbproxyError;
  /** Same as calling the definition, with an underlying cause attached. */
  withCause(cause: unknown, ...args: A): DbproxyError;
  /** True when `err` was made by this definition. */
  is(err: unknown): err is DbproxyError;
}

const registry = new Map<string, string>();

/**
 * Defines an error code once for the whole process. `template` uses util.format
 * placeholders (`%s`, `%d`, `%j`). Defining a code twice throws: codes are never reused.
 */
export function createError<A extends unknown[] = []>(code: string, template: string): ErrorDefinition<A> {
  if (!/^DBP_ERR_[A-Z0-9_]+$/.test(code)) throw new TypeError(`invalid error code ${code}`);
  if (registry.has(code)) throw new TypeError(`error code ${code} is defined twice`);
  registry.set(code, template);
  const make = (cause: unknown, args: A): DbproxyError =>
    new DbproxyError(code, format(template, ...args), args, cause === undefined ? undefined : { cause });
  const definition = ((...args: A) => make(undefined, args)) as ErrorDefinition<A>;
  Object.defineProperties(definition, {
    code: { value: code },
    template: { value: template },
    withCause: { value: (cause: unknown, ...args: A) => make(cause, args) },
    is: { value: (err: unknown) => err instanceof DbproxyError && err.code === code },
  });
  return definition;
}

/** Every code defined so far in this process, with its message template. */
export function registeredErrors(): ReadonlyMap<string, string> {
  return registry;
}

/** The `code` of a DbproxyError or of a Node.js system error, else undefined. */
export function errorCode(err: unknown): string | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

/** A message for any thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
