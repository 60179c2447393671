// JSON schemas of GET /v1/backends, POST /v1/backends/{name}/drain|undrain and GET /v1/edges.
import { errorShape } from './schemas';

const security = [{ bearerAuth: [] }];
const protocol = { type: 'string', enum: ['mysql', 'postgres', 'redis'] } as const;
const error = errorShape;
const nullable = (type: 'number' | 'string') => ({ type: [type, 'null'] }) as const;

const backend = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    protocol,
    address: { type: 'string', description: 'host:port' },
    role: { type: 'string', enum: ['primary', 'replica'] },
    shard: { type: 'string' },
    status: { type: 'string', enum: ['online', 'offline_soft', 'offline_hard'], description: 'The configured status' },
    health: { type: 'string', enum: ['up', 'down', 'unknown'], description: "topology's verdict; unknown without a recent report" },
    latency_ms: { ...nullable('number'), description: 'Duration of the last health check' },
    lag_seconds: { ...nullable('number'), description: 'Replication lag of a replica; null on primaries or when unknown' },
    position: { ...nullable('string'), description: 'Replication position at the last check: GTID set (MariaDB gtid_current_pos), WAL LSN (PostgreSQL: replay LSN on a replica, current LSN on a primary) or offset (Redis); null when unknown' },
    checked_at: { ...nullable('string'), format: 'date-time' },
    error: { ...nullable('string'), description: 'Error of the last failed check' },
  },
  required: ['name', 'protocol', 'address', 'role', 'shard', 'status', 'health', 'latency_ms', 'lag_seconds', 'checked_at', 'error'],
  additionalProperties: false,
} as const;

const edge = {
  type: 'object',
  properties: {
    instance_id: { type: 'string' },
    protocol,
    epoch: { type: 'integer', description: 'Configuration epoch the instance serves new sessions on' },
    sessions: { type: 'integer' },
    version: { type: 'string' },
    admin_address: { type: 'string' },
    started_at: { type: 'string', format: 'date-time' },
    sent_at: { type: 'string', format: 'date-time', description: 'When the instance sent its last heartbeat' },
    last_seen: { type: 'string', format: 'date-time', description: 'When config-api received it' },
  },
  required: ['instance_id', 'protocol', 'epoch', 'sessions', 'version', 'admin_address', 'started_at', 'sent_at', 'last_seen'],
  additionalProperties: false,
} as const;

const statusChange = (status: 'offline_soft' | 'online', what: string) =>
  ({
    operationId: status === 'online' ? 'undrainBackend' : 'drainBackend',
    summary: what,
    description:
      status === 'online'
        ? 'A new configuration epoch with the backend\'s `status` = `online`; the edges send it new connections again.'
        : "A new configuration epoch with the backend's `status` = `offline_soft`: it takes no new connections or sessions, open transactions and pinned sessions finish, its pooled connections close as they come back. The history entry is authored by the token's name.",
    tags: ['backends'],
    security,
    params: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 128 } }, required: ['name'] },
    querystring: { type: 'object', properties: { protocol: { ...protocol, description: 'Needed only when backends of several protocols have this name' } }, additionalProperties: false },
    response: {
      200: {
        type: 'object',
        properties: {
          backend: { type: 'string' },
          protocol,
          status: { type: 'string', enum: [status] },
          epoch: { type: 'integer', description: 'The configuration epoch in force with this status' },
          changed: { type: 'boolean', description: 'false when the backend already had this status' },
        },
        required: ['backend', 'protocol', 'status', 'epoch', 'changed'],
        additionalProperties: false,
      },
      400: { description: 'The changed configuration does not validate', ...error },
      401: { description: 'No valid bearer token', ...error },
      403: { description: 'A read-only token', ...error },
      404: { description: 'No backend of that name (or no configuration yet)', ...error },
      409: { description: 'The name is ambiguous across protocols, or the backend is offline_hard (drain)', ...error },
    },
  }) as const;

export const backendSchemas = {
  listBackends: {
    operationId: 'listBackends',
    summary: "Configured backends with topology's latest health, latency and lag",
    tags: ['backends'],
    security,
    querystring: { type: 'object', properties: { protocol }, additionalProperties: false },
    response: {
      200: { type: 'object', properties: { backends: { type: 'array', items: backend } }, required: ['backends'], additionalProperties: false },
      401: { description: 'No valid bearer token', ...error },
    },
  },
  drainBackend: statusChange('offline_soft', 'Drain a backend: no new connections, in-use ones finish'),
  undrainBackend: statusChange('online', 'Undrain a backend: back online'),
  listEdges: {
    operationId: 'listEdges',
    summary: 'Live edge instances from their heartbeats',
    tags: ['edges'],
    security,
    response: {
      200: { type: 'object', properties: { edges: { type: 'array', items: edge } }, required: ['edges'], additionalProperties: false },
      401: { description: 'No valid bearer token', ...error },
    },
  },
} as const;
