// [[mysql.routes]] and [[postgres.routes]]: handshake routes that pick a session's shard (its
// cluster) from the database and user the client names at login, first match wins.
import { z } from 'zod';
import { name } from './common';

/** Exact text, or a pattern where `*` stands for any run of characters (nothing else is special). */
const matchPattern = z.string({ invalid_type_error: 'expected a name or a * pattern' }).min(1, 'must not be empty').max(256, 'at most 256 characters');

export const handshakeRoute = z
  .object({
    /** Shown in metrics, logs, spans and GET /sessions. */
    name,
    /** The database the client names (MySQL handshake response, PostgreSQL startup `database`). */
    database: matchPattern.optional(),
    /** The user the client names. */
    user: matchPattern.optional(),
    /** The shard (a `shard` of the protocol's backends) that becomes the session's cluster. */
    shard: name,
    /** MySQL only: how this route's logins authenticate ("proxy": [[users]]; "passthrough": the shard's primary decides); absent: [mysql] auth. */
    auth: z.enum(['proxy', 'passthrough']).optional(),
  })
  .strict();

export type HandshakeRouteConfig = z.infer<typeof handshakeRoute>;
