// Bearer-token authentication from [config_api] tokens: 401 without a valid token, 403 when a
// read-only token attempts a write.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConfigApiConfig, DeepReadonly } from '@dbproxy/config';

export interface Caller {
  readonly name: string;
  readonly role: 'admin' | 'read_only';
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Finds the token's owner in constant time per configured token. */
export function authenticate(header: string | undefined, api: DeepReadonly<ConfigApiConfig>): Caller | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const presented = digest(match[1] as string);
  let found: Caller | undefined;
  for (const t of api.tokens) {
    if (timingSafeEqual(presented, digest(t.token))) found = { name: t.name, role: t.role };
  }
  return found;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

/** A preHandler that authenticates and enforces the role a route needs. */
export function requireRole(role: 'read' | 'write', api: () => DeepReadonly<ConfigApiConfig>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = authenticate(request.headers.authorization, api());
    if (!caller) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="dbproxy"').send({ error: 'unauthorized', message: 'a valid bearer token is required' });
    }
    if (role === 'write' && caller.role !== 'admin') {
      return reply.code(403).send({ error: 'forbidden', message: `token "${caller.name}" is read-only` });
    }
    request.caller = caller;
    return undefined;
  };
}
