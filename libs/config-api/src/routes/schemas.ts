// JSON schemas of the config API's routes: they validate parameters and feed /docs/json.
const security = [{ bearerAuth: [] }];
const anyObject = { type: 'object', additionalProperties: true } as const;
const error = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
  additionalProperties: true,
} as const;
const issues = {
  type: 'array',
  items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } }, required: ['path', 'message'] },
} as const;
const epochParam = {
  type: 'object',
  properties: { epoch: { type: 'integer', minimum: 1 } },
  required: ['epoch'],
} as const;
const ifMatch = {
  type: 'object',
  properties: { 'if-match': { type: 'string', description: 'The epoch the change is based on; 409 when it is not current' } },
} as const;
const writeResult = {
  type: 'object',
  properties: { epoch: { type: 'integer' }, changed: { type: 'boolean' }, summary: { type: 'string' } },
} as const;
const writeErrors = {
  400: { description: 'Invalid configuration: every problem with its key path', type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' }, issues } },
  401: { description: 'No valid bearer token', ...error },
  403: { description: 'A read-only token', ...error },
  409: { description: 'If-Match names an epoch that is no longer current', ...error },
} as const;

export const schemas = {
  getConfig: {
    summary: 'The configuration in force, secrets redacted',
    tags: ['config'],
    security,
    response: {
      200: {
        type: 'object',
        properties: { epoch: { type: 'integer' }, author: { type: 'string' }, appliedAt: { type: 'string' }, hash: { type: 'string' }, config: anyObject },
      },
      401: error,
      404: error,
    },
  },
  putConfig: {
    summary: 'Replace the configuration (JSON, or TOML as application/toml); a new epoch on success',
    description: 'Secrets sent back as "********" keep their current values.',
    tags: ['config'],
    security,
    headers: ifMatch,
    response: { 200: writeResult, ...writeErrors },
  },
  validateConfig: {
    summary: 'Validate a configuration without applying it',
    tags: ['config'],
    security,
    response: {
      200: { type: 'object', properties: { valid: { type: 'boolean' }, summary: { type: 'array', items: { type: 'string' } } } },
      400: { type: 'object', properties: { valid: { type: 'boolean' }, issues } },
    },
  },
  listEpochs: {
    summary: 'Configuration history: epoch, time, author and a summary of each change',
    tags: ['config'],
    security,
    response: {
      200: {
        type: 'object',
        properties: {
          current: { type: 'integer' },
          epochs: {
            type: 'array',
            items: {
              type: 'object',
              properties: { epoch: { type: 'integer' }, appliedAt: { type: 'string' }, author: { type: 'string' }, summary: { type: 'string' }, hash: { type: 'string' }, rollbackOf: { type: 'integer' } },
            },
          },
        },
      },
    },
  },
  getEpoch: { summary: 'One epoch of the history, secrets redacted', tags: ['config'], security, params: epochParam, response: { 200: anyObject, 404: error } },
  rollback: {
    summary: 'Make an earlier epoch current again (as a new epoch)',
    tags: ['config'],
    security,
    params: epochParam,
    headers: ifMatch,
    response: { 200: writeResult, 404: error, ...writeErrors },
  },
} as const;
