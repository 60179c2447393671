// JSON schemas of the operations routes (sessions, pools, kill, pause/resume, action log): they
// validate parameters and bodies, shape the responses and feed /docs/json.
const security = [{ bearerAuth: [] }];
const error = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
  required: ['error', 'message'],
} as const;
const authErrors = { 401: { description: 'No valid bearer token', ...error } } as const;
const writeErrors = { ...authErrors, 403: { description: 'A read-only token', ...error } } as const;
const protocol = { type: 'string', enum: ['mysql', 'postgres', 'redis'] } as const;
const nullableString = { type: ['string', 'null'] } as const;

const edgeStatus = {
  type: 'object',
  description: "One edge instance's answer: ok, or timeout/error (its sessions or pools are then missing)",
  properties: {
    edge: { type: 'string', description: 'Edge instance id, as in GET /v1/edges' },
    protocol,
    status: { type: 'string', enum: ['ok', 'timeout', 'error'] },
    elapsed_ms: { type: 'number' },
    statements_total: { type: 'integer', description: 'Statements or commands the instance ran since it started' },
    paused: { type: 'boolean' },
  },
  required: ['edge', 'protocol', 'status', 'elapsed_ms', 'statements_total', 'paused'],
} as const;

const session = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'Opaque, URL-safe, unique fleet-wide' },
    edge: { type: 'string' },
    protocol,
    client_address: { type: 'string' },
    user: { type: 'string' },
    database: { type: 'string' },
    listener: { type: 'string' },
    state: { type: 'string', description: 'login, idle, running, in transaction, pinned, waiting (for a pooled connection), held (paused edge)' },
    statement: { ...nullableString, description: 'Fingerprint of the running or last statement (never literal values)' },
    backend: nullableString,
    pinned_reason: nullableString,
    epoch: { type: 'integer' },
    age_seconds: { type: 'number' },
    bytes_in: { type: 'integer' },
    bytes_out: { type: 'integer' },
    route: { ...nullableString, description: 'The handshake route ([[mysql.routes]] / [[postgres.routes]]) that chose the shard; null without routes' },
    shard: { ...nullableString, description: 'The shard (cluster) the session runs on, where the edge knows it' },
  },
  required: ['id', 'edge', 'protocol', 'client_address', 'user', 'database', 'listener', 'state', 'statement', 'backend', 'pinned_reason', 'epoch', 'age_seconds', 'bytes_in', 'bytes_out'],
} as const;

const quantile = { type: 'number', description: 'ms, over the most recent acquires' } as const;
const pool = {
  type: 'object',
  properties: {
    edge: { type: 'string' },
    protocol,
    backend: { type: 'string' },
    in_use: { type: 'integer' },
    idle: { type: 'integer' },
    waiters: { type: 'integer' },
    checkouts: { type: 'integer' },
    timeouts: { type: 'integer' },
    resets: { type: 'integer' },
    wait_ms: { type: 'object', properties: { p50: quantile, p95: quantile, p99: quantile }, required: ['p50', 'p95', 'p99'] },
  },
  required: ['edge', 'protocol', 'backend', 'in_use', 'idle', 'waiters', 'checkouts', 'timeouts', 'resets', 'wait_ms'],
} as const;

const edges = { type: 'array', items: edgeStatus } as const;
const filter = (description: string) => ({ type: 'string', minLength: 1, maxLength: 256, description }) as const;

export const sessionSchemas = {
  listSessions: {
    operationId: 'listSessions',
    summary: 'Live client sessions of every live edge instance',
    description: 'Each edge is asked at once and waited for at most config_api.edge_request_timeout_seconds; a slow edge shows as status "timeout".',
    tags: ['sessions'],
    security,
    querystring: {
      type: 'object',
      properties: { edge: filter('Edge instance id'), protocol, user: filter('Proxy user'), backend: filter('Backend the session is on') },
      additionalProperties: false,
    },
    response: { 200: { type: 'object', properties: { edges, sessions: { type: 'array', items: session } }, required: ['edges', 'sessions'] }, ...authErrors },
  },
  listPools: {
    operationId: 'listPools',
    summary: 'Backend pools of every live edge instance',
    tags: ['sessions'],
    security,
    querystring: {
      type: 'object',
      properties: { edge: filter('Edge instance id'), protocol, backend: filter('Backend name') },
      additionalProperties: false,
    },
    response: { 200: { type: 'object', properties: { edges, pools: { type: 'array', items: pool } }, required: ['edges', 'pools'] }, ...authErrors },
  },
  killSession: {
    operationId: 'killSession',
    summary: 'Close a session; the client receives the reason in its protocol',
    description: 'MySQL ERR 1927 (70100), PostgreSQL FATAL 57P01, Redis -ERR, each with the reason; then the connection closes.',
    tags: ['sessions'],
    security,
    params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' } }, required: ['id'] },
    body: { type: ['object', 'null'], properties: { reason: { type: 'string', maxLength: 256 } }, additionalProperties: false },
    response: {
      200: { type: 'object', properties: { killed: { type: 'string' }, edge: { type: 'string' } }, required: ['killed', 'edge'] },
      404: { description: 'No live edge has the session', ...error },
      ...writeErrors,
    },
  },
  pauseEdge: {
    operationId: 'pauseEdge',
    summary: 'Pause an edge instance: running transactions finish, new statements are held until resume',
    description: 'A statement held longer than timeout_seconds (default proxy.pause_timeout_seconds) fails with an error naming the pause.',
    tags: ['edges'],
    security,
    params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 256 } }, required: ['id'] },
    body: { type: ['object', 'null'], properties: { timeout_seconds: { type: 'number', minimum: 0.001, maximum: 86400 } }, additionalProperties: false },
    response: {
      200: { type: 'object', properties: { edge: { type: 'string' }, paused: { type: 'boolean' } }, required: ['edge', 'paused'] },
      404: { description: 'No live edge instance has this id', ...error },
      504: { description: 'The edge did not answer in time', ...error },
      ...writeErrors,
    },
  },
  resumeEdge: {
    operationId: 'resumeEdge',
    summary: 'Resume a paused edge instance: held statements run',
    tags: ['edges'],
    security,
    params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 256 } }, required: ['id'] },
    response: {
      200: { type: 'object', properties: { edge: { type: 'string' }, paused: { type: 'boolean' } }, required: ['edge', 'paused'] },
      404: { description: 'No live edge instance has this id', ...error },
      504: { description: 'The edge did not answer in time', ...error },
      ...writeErrors,
    },
  },
  listActions: {
    operationId: 'listActions',
    summary: 'Operator actions (kill, pause, resume, drain, undrain), oldest first, bounded by config_api.action_log_limit',
    tags: ['actions'],
    security,
    response: {
      200: {
        type: 'object',
        properties: {
          actions: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                at: { type: 'string', format: 'date-time' },
                token: { type: 'string', description: 'Name of the bearer token that acted' },
                action: { type: 'string', enum: ['kill', 'pause', 'resume', 'drain', 'undrain'] },
                target: { type: 'string' },
                outcome: { type: 'string' },
              },
              required: ['at', 'token', 'action', 'target', 'outcome'],
            },
          },
        },
        required: ['actions'],
      },
      ...authErrors,
    },
  },
} as const;
