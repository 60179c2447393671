// [[bgd_deployments]]: RDS blue/green deployments watched by bgd-monitor (spec 001).
import { z } from 'zod';
import { name, positiveSeconds } from './common';

export const bgdDeployment = z
  .object({
    name,
    /** false stops the deployment's worker (rolling back what it changed). */
    enabled: z.boolean().default(true),
    protocol: z.enum(['mysql']).default('mysql'),
    /** [[mysql_backends]] names of the blue writer and readers this deployment governs. */
    blue_writer: name,
    blue_readers: z.array(name).default([]),
    /** Green backends; absent = discovered from mysql.rds_topology. */
    green_writer: name.optional(),
    green_readers: z.array(name).default([]),
    writer_is_also_reader: z.boolean().default(false),
    check_interval_seconds: positiveSeconds.default(1),
    check_timeout_seconds: positiveSeconds.default(1),
  })
  .strict();

export const bgdSection = z.array(bgdDeployment).default([]);
