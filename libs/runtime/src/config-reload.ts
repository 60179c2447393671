// SIGHUP: with the embedded bus (one process holds every service) the --config file is read
// again, validated and written as the next epoch, which every service in the process applies;
// an invalid file is logged and the current epoch stays. With NATS, config-api owns the
// configuration of the fleet, so SIGHUP only says so. It never stops the process.
import { KvRecords, openRecords, type Bus, type ConfigRecord } from '@dbproxy/bus';
import { formatIssue, loadConfigFile, type Environment } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import { documentHash, type ConfigFollower } from './config-follower';

export type ReloadOutcome =
  | { readonly kind: 'applied'; readonly epoch: number }
  | { readonly kind: 'unchanged'; readonly epoch: number }
  | { readonly kind: 'invalid'; readonly epoch: number; readonly issues: readonly string[] }
  | { readonly kind: 'failed'; readonly epoch: number; readonly error: string }
  | { readonly kind: 'ignored'; readonly epoch: number };

export interface ReloadContext {
  readonly configPath: string;
  readonly env: Environment;
  readonly bus: Bus;
  readonly config: ConfigFollower;
  readonly logger: Logger;
  /** Author of the epoch in the configuration history, e.g. `sighup:dbproxy@host-123`. */
  readonly author: string;
  /** This process is a worker of an edge's primary (it follows the primary's epochs, never writes one). */
  readonly worker: boolean;
}

export async function reloadConfigFile(ctx: ReloadContext): Promise<ReloadOutcome> {
  const { logger, config } = ctx;
  const epoch = config.current().epoch;
  if (ctx.bus.kind !== 'embedded' || ctx.worker) {
    logger.info({ signal: 'SIGHUP', epoch, bus: ctx.bus.kind }, 'SIGHUP ignored: with NATS the configuration changes through config-api (PUT /v1/config), not the --config file');
    return { kind: 'ignored', epoch };
  }
  const loaded = loadConfigFile(ctx.configPath, ctx.env);
  if (!loaded.ok || loaded.document === undefined) {
    const issues = loaded.ok ? ['the file has no document'] : loaded.issues.map(formatIssue);
    logger.error({ signal: 'SIGHUP', file: ctx.configPath, epoch, issues }, 'SIGHUP: the configuration file is invalid; keeping the current epoch');
    return { kind: 'invalid', epoch, issues };
  }
  const hash = documentHash(loaded.document);
  if (hash === documentHash(config.current().document)) {
    logger.info({ signal: 'SIGHUP', file: ctx.configPath, epoch }, 'SIGHUP: the configuration file is unchanged; keeping the current epoch');
    return { kind: 'unchanged', epoch };
  }
  const record: ConfigRecord = { config: loaded.document, hash, author: ctx.author, appliedAt: new Date().toISOString(), comment: `reloaded from ${ctx.configPath} on SIGHUP` };
  try {
    const store = await openRecords(ctx.bus, KvRecords.config);
    const next = await store.put({}, record, { expectedRevision: epoch });
    logger.info({ signal: 'SIGHUP', file: ctx.configPath, epoch: next, previous: epoch }, 'SIGHUP: configuration file reloaded as a new epoch');
    return { kind: 'applied', epoch: next };
  } catch (err) {
    logger.error({ signal: 'SIGHUP', file: ctx.configPath, epoch, err: errorMessage(err) }, 'SIGHUP: could not write the new epoch; keeping the current one');
    return { kind: 'failed', epoch, error: errorMessage(err) };
  }
}
