// The operator commands' HTTP client of config-api: bearer token, a deadline per request, and
// errors an operator can act on (unreachable API, refused token, unknown target).
import { errorMessage } from '@dbproxy/util';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    /** A 404 from the router: this config-api has no such route at all. */
    readonly noRoute = false,
  ) {
    super(message);
  }
}

/** Fastify's own 404 names the route: `Route GET:/v1/x not found`. */
const isRouterMiss = (body: Record<string, unknown>) => typeof body['message'] === 'string' && /^Route \S+ not found$/.test(body['message']);

export interface ApiClientOptions {
  readonly url: string;
  readonly token: string;
  readonly timeoutMs: number;
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? errorMessage(err);
}

export class ApiClient {
  constructor(private readonly options: ApiClientOptions) {}

  get url(): string {
    return this.options.url;
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('POST', path, body);
  }

  delete<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('DELETE', path, body);
  }

  /** GET that answers undefined when this config-api has no such route. */
  async optional<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (err) {
      if (err instanceof ApiError && err.noRoute) return undefined;
      throw err;
    }
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const target = `${this.options.url}${path}`;
    let res: Response;
    try {
      res = await fetch(target, { method, headers, signal: AbortSignal.timeout(this.options.timeoutMs), ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    } catch (err) {
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs / 1000} s` : causeOf(err);
      throw new ApiError(`config-api at ${this.options.url} is unreachable (${why}); set --url or DBPROXY_API_URL`, null);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : {};
    } catch {
      throw new ApiError(`config-api at ${this.options.url} answered ${method} ${path} with ${res.status} and a body that is not JSON`, res.status);
    }
    if (res.ok) return parsed as T;
    const fields = (parsed ?? {}) as Record<string, unknown>;
    throw new ApiError(this.describe(res.status, method, path, fields), res.status, res.status === 404 && isRouterMiss(fields));
  }

  private describe(status: number, method: string, path: string, body: Record<string, unknown>): string {
    const message = typeof body['message'] === 'string' ? body['message'] : undefined;
    if (status === 401) return `config-api refused the token (401 unauthorized); set --token or DBPROXY_API_TOKEN`;
    if (status === 403) return `config-api: ${message ?? 'forbidden'} (403); this command needs an admin token`;
    if (status === 404 && (message === undefined || isRouterMiss(body))) return `config-api at ${this.options.url} has no ${method} ${path.split('?')[0]} (404): an older config-api?`;
    return `config-api: ${message ?? `${method} ${path} failed`} (${status}${typeof body['error'] === 'string' ? ` ${body['error']}` : ''})`;
  }
}
