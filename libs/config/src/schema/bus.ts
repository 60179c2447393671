// [bus] credentials and TLS towards NATS: one way to authenticate, each secret inline (`${ENV}`)
// or in a file, and TLS with server verification always on.
import { z } from 'zod';

const path = z.string({ invalid_type_error: 'expected a file path' }).min(1, 'expected a file path');
const secret = z.string({ invalid_type_error: 'expected a string' }).min(1, 'must not be empty');

/** TLS to NATS: the server certificate is always verified (against ca_file, else the system roots). */
export const busTls = z
  .object({
    enabled: z.boolean().default(false),
    ca_file: path.optional(),
    cert_file: path.optional(),
    key_file: path.optional(),
    /** Name the server certificate must carry when it differs from the host in nats_url. */
    server_name: z.string().min(1).optional(),
  })
  .strict();

/** Authentication keys of [bus]; at most one method (user+password, token, NKey seed, .creds file). */
export const busAuthKeys = {
  user: z.string().min(1).optional(),
  password: secret.optional(),
  password_file: path.optional(),
  token: secret.optional(),
  token_file: path.optional(),
  nkey_seed: secret.optional(),
  nkey_seed_file: path.optional(),
  creds_file: path.optional(),
  /** Allow a non-loopback NATS without TLS or without credentials (logged as a warning at start). */
  insecure: z.boolean().default(false),
  tls: busTls.default({}),
} as const;
