// [proxy], [bus] and [telemetry]: process-wide settings every service reads.
import { isIP } from 'node:net';
import { z } from 'zod';
import { busAuthKeys } from './bus';
import { listenAddress, nonNegativeInt, positiveSeconds, positiveInt } from './common';

/** Admin HTTP listeners: one per service when services run apart, `listen` for several in one process. */
export const adminSection = z
  .object({
    listen: listenAddress.default('127.0.0.1:9090'),
    mysql_edge: listenAddress.default('0.0.0.0:9101'),
    pg_edge: listenAddress.default('0.0.0.0:9102'),
    redis_edge: listenAddress.default('0.0.0.0:9103'),
    topology: listenAddress.default('0.0.0.0:9104'),
    bgd_monitor: listenAddress.default('0.0.0.0:9105'),
    config_api: listenAddress.default('0.0.0.0:9106'),
    xa_coordinator: listenAddress.default('0.0.0.0:9107'),
    request_timeout_seconds: positiveSeconds.default(10),
  })
  .strict();

/** Frontend TLS for the protocol listeners. */
export const frontendTls = z
  .object({
    mode: z.enum(['disabled', 'optional', 'required']).default('disabled'),
    cert_path: z.string().optional(),
    key_path: z.string().optional(),
    ca_path: z.string().optional(),
  })
  .strict()
  .refine((t) => t.mode === 'disabled' || (t.cert_path !== undefined && t.key_path !== undefined), {
    message: 'cert_path and key_path are required unless mode = "disabled"',
  });

/** `10.0.0.0/8`, `fd00::/8` or a single address: a network a PROXY protocol header is accepted from. */
const proxyNetwork = z.string().refine((s) => {
  const [ip = '', bits, extra] = s.split('/');
  const family = isIP(ip);
  if (family === 0 || extra !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}, 'expected a network such as "10.0.0.0/8" or "fd00::/8", or one address');

export const proxySection = z
  .object({
    instance_name: z.string().min(1).optional(),
    shutdown_timeout_seconds: positiveSeconds.default(30),
    /** While an edge is paused (POST /v1/edges/{id}/pause), a held statement fails after this long. */
    pause_timeout_seconds: positiveSeconds.default(60),
    client_read_timeout_seconds: positiveSeconds.default(3600),
    client_write_timeout_seconds: positiveSeconds.default(60),
    admin: adminSection.default({}),
    tls: frontendTls.default({}),
    /**
     * Load balancers in front of the edges: a connection from these networks must open with a PROXY
     * protocol header (v2; v1 with proxy_protocol_accept_v1) naming the client; one from elsewhere
     * that sends a header is refused. Empty: no header is read.
     */
    proxy_protocol_from: z.array(proxyNetwork).default([]),
    /** A listed peer that has not sent its whole header this long after connecting is disconnected. */
    proxy_protocol_header_timeout_seconds: positiveSeconds.default(5),
    /** Largest version 2 header (with its TLVs) accepted; 232 bytes hold any address block. */
    proxy_protocol_max_header_bytes: positiveInt.min(232, 'must be at least 232 (the largest address block)').max(65551, 'must be at most 65551').default(1024),
    /** Also accept the version 1 text header from the listed networks. */
    proxy_protocol_accept_v1: z.boolean().default(false),
    /**
     * TEST ONLY: hostname -> IP answers that override DNS for backend addresses, DNS pins and
     * bgd-monitor's green lookups (the blue/green simulator cannot change real DNS). Leave empty.
     */
    test_hosts: z.record(z.string().min(1), z.string().ip('expected an IP address')).default({}),
  })
  .strict();

/** Public keys (nkeys `U…`) of the services that sign messages changing placement or data. */
export const busIdentities = z
  .object({
    config_api: z.string().min(1).optional(),
    bgd_monitor: z.string().min(1).optional(),
    mysql_edge: z.string().min(1).optional(),
    xa_coordinator: z.string().min(1).optional(),
  })
  .strict();

/** This process's signing seeds (nkeys `SU…`, use `${VAR}`; an empty value, such as `${VAR:-}` unset, means none) or files holding them, per service it runs. */
export const busSigning = z
  .object({
    config_api_seed: z.string().optional(),
    bgd_monitor_seed: z.string().optional(),
    mysql_edge_seed: z.string().optional(),
    xa_coordinator_seed: z.string().optional(),
    config_api_seed_file: z.string().min(1).optional(),
    bgd_monitor_seed_file: z.string().min(1).optional(),
    mysql_edge_seed_file: z.string().min(1).optional(),
    xa_coordinator_seed_file: z.string().min(1).optional(),
    /** Replay window: signed messages older (or further in the future) than this are refused. */
    max_age_seconds: positiveSeconds.default(30),
  })
  .strict();

export const busSection = z
  .object({
    /** NATS server URL(s), comma separated; absent = the embedded in-process bus. */
    nats_url: z.string().min(1).optional(),
    connect_timeout_seconds: positiveSeconds.default(5),
    heartbeat_interval_seconds: positiveSeconds.default(5),
    ...busAuthKeys,
    identities: busIdentities.default({}),
    signing: busSigning.default({}),
  })
  .strict();

export const telemetrySection = z
  .object({
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** OTLP/HTTP traces endpoint, e.g. http://jaeger:4318/v1/traces; absent = tracing off. */
    otlp_endpoint: z.string().url('expected a URL').optional(),
    sample_ratio: z.number().min(0).max(1).default(1),
    service_namespace: z.string().default('dbproxy'),
    max_export_batch_size: positiveInt.default(512),
    /** Operational log lines (session open/close, failed logins, backend up/down) per kind per second; 0 = no limit. */
    log_rate_limit_per_second: nonNegativeInt.default(50),
    /** OTLP encoding: JSON over HTTP (what Jaeger's and the OpenTelemetry Collector's :4318 accept). */
    otlp_protocol: z.enum(['http/json'], { message: 'expected "http/json" (the only OTLP protocol this build sends)' }).default('http/json'),
    /** Finished spans are sent at least this often (the batch processor's delay). */
    export_delay_ms: positiveInt.default(5000),
  })
  .strict();
