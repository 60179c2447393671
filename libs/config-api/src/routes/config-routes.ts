// /v1/config routes: read (redacted), replace with If-Match, validate, history and rollback.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseToml, redactSecrets, restoreRedacted, summarizeConfig, type RawDocument } from '@dbproxy/config';
import type { ConfigStore, WriteOutcome } from '../config-store';
import type { HistoryEntry } from '../history';
import type { RouteGuards } from './guards';
import { schemas } from './schemas';

/** The request body as a document: JSON object, or TOML text (application/toml, text/plain). */
function bodyDocument(request: FastifyRequest): { ok: true; document: RawDocument } | { ok: false; message: string; issues?: { path: string; message: string }[] } {
  const body = request.body;
  if (typeof body === 'string') {
    const parsed = parseToml(body);
    return parsed.ok ? parsed : { ok: false, message: 'the TOML body does not parse', issues: parsed.issues };
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) return { ok: true, document: body as RawDocument };
  return { ok: false, message: 'the body must be a configuration document (JSON object or TOML)' };
}

/** `If-Match: 7`, `"7"` or `W/"7"` → 7; absent → undefined; anything else → NaN. */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const m = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(header);
  return m ? Number(m[1]) : Number.NaN;
}

function sendOutcome(reply: FastifyReply, outcome: WriteOutcome) {
  switch (outcome.kind) {
    case 'applied':
      return reply.header('etag', `"${outcome.epoch}"`).send({ epoch: outcome.epoch, changed: true, summary: outcome.entry.summary });
    case 'unchanged':
      return reply.header('etag', `"${outcome.epoch}"`).send({ epoch: outcome.epoch, changed: false, summary: 'no changes' });
    case 'invalid':
      return reply.code(400).send({ error: 'invalid_config', message: `${outcome.issues.length} problem(s) in the configuration`, issues: outcome.issues });
    case 'stale':
      return reply.code(409).send({ error: 'stale_epoch', message: `the configuration is at epoch ${outcome.currentEpoch}; re-read it and retry`, current_epoch: outcome.currentEpoch });
  }
}

/** A history entry's metadata as the API spells it (snake_case, like every admin JSON key). */
function epochMeta(entry: Omit<HistoryEntry, 'config'>) {
  return {
    epoch: entry.epoch,
    applied_at: entry.appliedAt,
    author: entry.author,
    summary: entry.summary,
    hash: entry.hash,
    ...(entry.rollbackOf !== undefined ? { rollback_of: entry.rollbackOf } : {}),
  };
}

export function registerConfigRoutes(app: FastifyInstance, store: ConfigStore, guards: RouteGuards): void {
  app.get('/v1/config', { preHandler: guards.read, schema: schemas.getConfig }, async (_req, reply) => {
    const current = await store.read();
    if (!current) return reply.code(404).send({ error: 'no_config', message: 'no configuration has been published yet' });
    const { record, epoch } = current;
    return reply.header('etag', `"${epoch}"`).send({ epoch, author: record.author, applied_at: record.appliedAt, hash: record.hash, config: redactSecrets(record.config) });
  });

  app.put('/v1/config', { preHandler: guards.write, schema: schemas.putConfig }, async (request, reply) => {
    const expectedEpoch = parseIfMatch(request.headers['if-match']);
    if (Number.isNaN(expectedEpoch)) return reply.code(400).send({ error: 'bad_if_match', message: 'If-Match must be the epoch, e.g. If-Match: "7"' });
    const body = bodyDocument(request);
    if (!body.ok) return reply.code(400).send({ error: 'invalid_config', message: body.message, issues: body.issues ?? [] });
    const current = await store.read();
    const document = restoreRedacted(body.document, current?.record.config) as RawDocument;
    return sendOutcome(reply, await store.write({ document, author: request.caller?.name ?? 'unknown', expectedEpoch }));
  });

  app.post('/v1/config/validate', { preHandler: guards.read, schema: schemas.validateConfig }, async (request, reply) => {
    const body = bodyDocument(request);
    if (!body.ok) return reply.code(400).send({ valid: false, issues: body.issues ?? [{ path: '(document)', message: body.message }] });
    const current = await store.read();
    const result = store.validate(restoreRedacted(body.document, current?.record.config));
    return result.ok ? reply.send({ valid: true, summary: summarizeConfig(result.config) }) : reply.code(400).send({ valid: false, issues: result.issues });
  });

  app.get('/v1/config/epochs', { preHandler: guards.read, schema: schemas.listEpochs }, async () => {
    const current = await store.read();
    const entries = await store.history.list();
    return { current: current?.epoch ?? 0, epochs: entries.map(({ config: _config, ...meta }) => epochMeta(meta)) };
  });

  app.get<{ Params: { epoch: number } }>('/v1/config/epochs/:epoch', { preHandler: guards.read, schema: schemas.getEpoch }, async (request, reply) => {
    const entry = await store.history.get(request.params.epoch);
    if (!entry) return reply.code(404).send({ error: 'unknown_epoch', message: `epoch ${request.params.epoch} is not in the history` });
    return { ...epochMeta(entry), config: redactSecrets(entry.config) };
  });

  app.post<{ Params: { epoch: number } }>('/v1/config/rollback/:epoch', { preHandler: guards.write, schema: schemas.rollback }, async (request, reply) => {
    const target = request.params.epoch;
    const entry = await store.history.get(target);
    if (!entry) return reply.code(404).send({ error: 'unknown_epoch', message: `epoch ${target} is not in the history` });
    const expectedEpoch = parseIfMatch(request.headers['if-match']);
    if (Number.isNaN(expectedEpoch)) return reply.code(400).send({ error: 'bad_if_match', message: 'If-Match must be the epoch, e.g. If-Match: "7"' });
    return sendOutcome(reply, await store.write({ document: entry.config, author: request.caller?.name ?? 'unknown', expectedEpoch, rollbackOf: target }));
  });
}
