// [health], [topology] and [config_api]: the control plane's own settings.
import { z } from 'zod';
import { listenAddress, positiveInt, positiveSeconds } from './common';

export const healthSection = z
  .object({
    interval_seconds: positiveSeconds.default(2),
    timeout_seconds: positiveSeconds.default(1),
    failures_before_down: positiveInt.default(2),
    successes_before_up: positiveInt.default(1),
  })
  .strict();

export const topologySection = z
  .object({
    republish_interval_seconds: positiveSeconds.default(10),
    redis_slot_refresh_seconds: positiveSeconds.default(10),
    refresh_debounce_ms: positiveInt.default(100),
  })
  .strict();

export const apiToken = z
  .object({
    name: z.string().min(1),
    token: z.string().min(16, 'must be at least 16 characters'),
    role: z.enum(['admin', 'read_only']).default('admin'),
  })
  .strict();

export const configApiSection = z
  .object({
    /** Loopback by default: beyond it, the example tokens are refused at start (libs/config-api listen-guard). */
    listen: listenAddress.default('127.0.0.1:8080'),
    tokens: z.array(apiToken).default([]),
    history_limit: positiveInt.default(100),
    edge_heartbeat_ttl_seconds: positiveSeconds.default(15),
    max_body_bytes: positiveInt.default(1048576),
    /** How long GET /v1/sessions, /v1/pools and the edge actions wait for each edge's answer. */
    edge_request_timeout_seconds: positiveSeconds.default(2),
    /** Actions (kill, pause, resume, drain, undrain) kept for GET /v1/actions. */
    action_log_limit: positiveInt.default(500),
    /** UNSAFE: store documents with literal secrets in the KV (every subscriber can read them). */
    allow_literal_secrets: z.boolean().default(false),
  })
  .strict();
