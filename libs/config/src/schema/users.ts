// [[users]]: frontend accounts the MySQL and PostgreSQL (transaction mode) listeners authenticate.
import { z } from 'zod';

export const userEntry = z
  .object({
    name: z.string().min(1, 'must not be empty').max(80),
    password: z.string(),
    mysql_auth_plugin: z.enum(['caching_sha2_password', 'mysql_native_password']).default('caching_sha2_password'),
    postgres_auth_method: z.enum(['scram-sha-256', 'md5']).default('scram-sha-256'),
    /** Limit the user to these shards (empty = all). */
    shards: z.array(z.string()).default([]),
  })
  .strict();

export const usersSection = z.array(userEntry).default([]);
