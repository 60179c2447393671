// JSON schemas of the config API's routes: they validate requests, serialize responses and are
// the OpenAPI document at /docs/json (every route: operationId, tags, security, request body,
// and a schema for each response it can give).
const security = [{ bearerAuth: [] }];
const anyObject = { type: 'object', additionalProperties: true } as const;
/** An error body: a stable code and a message for people. */
export const errorShape = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
  required: ['error', 'message'],
  additionalProperties: true,
} as const;
/** An error response: a stable code and a message for people. */
const error = (description: string) => ({ description, ...errorShape });
const unauthorized = { 401: error('No valid bearer token') } as const;
const forbidden = { 403: error('A read-only token tried to write') } as const;
const issues = {
  type: 'array',
  items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } }, required: ['path', 'message'] },
} as const;
const epochParam = {
  type: 'object',
  properties: { epoch: { type: 'integer', minimum: 1, description: 'A configuration epoch (the KV revision)' } },
  required: ['epoch'],
} as const;
const ifMatch = {
  type: 'object',
  properties: { 'if-match': { type: 'string', description: 'The epoch the change is based on, e.g. "7"; 409 when it is not current' } },
} as const;
/** A configuration document: a JSON object, or TOML text as application/toml (or text/plain). */
const configBody = {
  description: 'A whole configuration document (the same keys as config/dbproxy.example.toml)',
  content: {
    'application/json': { schema: { type: 'object', additionalProperties: true } },
    'application/toml': { schema: { type: 'string', description: 'TOML text' } },
    'text/plain': { schema: { type: 'string', description: 'TOML text' } },
  },
} as const;
const writeResult = {
  description: 'Applied as a new epoch (changed: true) or identical to the current one (changed: false); ETag carries the epoch',
  type: 'object',
  properties: { epoch: { type: 'integer' }, changed: { type: 'boolean' }, summary: { type: 'string' } },
  required: ['epoch', 'changed', 'summary'],
} as const;
const invalidConfig = {
  description: 'Invalid configuration: every problem with its key path',
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' }, issues },
  required: ['error', 'message'],
} as const;
const stale = {
  description: 'If-Match names an epoch that is no longer current',
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' }, current_epoch: { type: 'integer' } },
  required: ['error', 'message'],
} as const;
const writeErrors = { 400: invalidConfig, ...unauthorized, ...forbidden, 409: stale, 503: error('The bus (NATS) is unavailable') } as const;
const epochMeta = {
  epoch: { type: 'integer' },
  applied_at: { type: 'string', format: 'date-time' },
  author: { type: 'string', description: 'The name of the token that made the change' },
  summary: { type: 'string' },
  hash: { type: 'string' },
  rollback_of: { type: 'integer', description: 'Set when this epoch restored an earlier one' },
} as const;

export const schemas = {
  getConfig: {
    operationId: 'getConfig',
    summary: 'The configuration in force, secrets redacted',
    tags: ['config'],
    security,
    response: {
      200: {
        description: 'The current epoch and its document; ETag carries the epoch',
        type: 'object',
        properties: { epoch: { type: 'integer' }, author: { type: 'string' }, applied_at: { type: 'string', format: 'date-time' }, hash: { type: 'string' }, config: anyObject },
        required: ['epoch', 'config'],
      },
      ...unauthorized,
      404: error('Nothing has been published yet'),
    },
  },
  putConfig: {
    operationId: 'putConfig',
    summary: 'Replace the configuration (JSON, or TOML as application/toml); a new epoch on success',
    description: 'Secrets sent back as "********" keep their current values.',
    tags: ['config'],
    security,
    headers: ifMatch,
    body: configBody,
    response: { 200: writeResult, ...writeErrors },
  },
  validateConfig: {
    operationId: 'validateConfig',
    summary: 'Validate a configuration without applying it',
    tags: ['config'],
    security,
    body: configBody,
    response: {
      200: { description: 'Valid: a summary of what it configures', type: 'object', properties: { valid: { type: 'boolean' }, summary: { type: 'array', items: { type: 'string' } } }, required: ['valid'] },
      400: {
        description: 'Invalid: every problem with its key path (or, for a body that is not a document, error and message)',
        type: 'object',
        properties: { valid: { type: 'boolean' }, issues, error: { type: 'string' }, message: { type: 'string' } },
      },
      ...unauthorized,
    },
  },
  listEpochs: {
    operationId: 'listEpochs',
    summary: 'Configuration history: epoch, time, author and a summary of each change',
    tags: ['config'],
    security,
    response: {
      200: {
        description: 'The current epoch and the kept history, oldest first',
        type: 'object',
        properties: { current: { type: 'integer' }, epochs: { type: 'array', items: { type: 'object', properties: epochMeta } } },
        required: ['current', 'epochs'],
      },
      ...unauthorized,
    },
  },
  getEpoch: {
    operationId: 'getEpoch',
    summary: 'One epoch of the history, secrets redacted',
    tags: ['config'],
    security,
    params: epochParam,
    response: {
      200: { description: 'The epoch with its document', type: 'object', properties: { ...epochMeta, config: anyObject }, required: ['epoch', 'config'] },
      ...unauthorized,
      404: error('The epoch is not in the history'),
    },
  },
  rollback: {
    operationId: 'rollbackConfig',
    summary: 'Make an earlier epoch current again (as a new epoch)',
    tags: ['config'],
    security,
    params: epochParam,
    headers: ifMatch,
    response: { 200: writeResult, ...writeErrors, 404: error('The epoch is not in the history') },
  },
} as const;
