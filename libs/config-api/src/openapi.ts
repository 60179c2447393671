// The config API's OpenAPI 3 document (generated from the route schemas) and its Swagger UI.
// Both are public: they describe the API and carry no configuration; every /v1 route they
// describe still needs a bearer token.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

export const DOCS_PREFIX = '/docs';

export interface OpenApiOptions {
  readonly version: string;
  /** The address the API listens on (`host:port`), published as the document's server. */
  readonly listen: string;
}

const TAGS = [
  { name: 'config', description: 'The versioned configuration: read, replace, validate, history, rollback' },
  { name: 'edges', description: 'Live edge instances and operator actions on them' },
];

/** `0.0.0.0:8080` → `http://localhost:8080`; `[::1]:8080` stays as written. */
export function serverUrl(listen: string): string {
  const at = listen.lastIndexOf(':');
  const host = listen.slice(0, at);
  const port = listen.slice(at + 1);
  const shown = host === '' || host === '*' || host === '0.0.0.0' || host === '[::]' ? 'localhost' : host;
  return `http://${shown}:${port}`;
}

export async function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'dbproxy config-api',
        version: opts.version,
        description:
          'Versioned configuration of dbproxy and the operator interface over the fleet; every configuration change is a new epoch. ' +
          'Every /v1 route needs `Authorization: Bearer <token>` from `[[config_api.tokens]]`; write routes need a token without `role = "read_only"`.',
        license: { name: 'UNLICENSED (proprietary)', url: 'https://spdx.org/licenses/' },
        contact: { name: 'dbproxy maintainers' },
      },
      servers: [{ url: serverUrl(opts.listen), description: 'this config-api instance' }],
      tags: TAGS,
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token from [[config_api.tokens]]' } } },
      security: [{ bearerAuth: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX, staticCSP: true });
}
