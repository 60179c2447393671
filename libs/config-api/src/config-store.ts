// The configuration as config-api reads and writes it: KV `dbproxy-config`/`current` (its
// revision is the epoch) plus the history of every epoch.
import { KvRecords, openRecords, BusErrors, type Bus, type ConfigRecord, type RecordStore } from '@dbproxy/bus';
import { validateDocument, type ConfigIssue, type DbproxyConfig, type Environment, type RawDocument } from '@dbproxy/config';
import { documentHash } from '@dbproxy/runtime';
import { ConfigHistory, type HistoryEntry } from './history';
import { literalSecretIssues } from './literal-secrets';

export interface CurrentConfig {
  readonly epoch: number;
  readonly record: ConfigRecord;
}

export type WriteOutcome =
  | { kind: 'applied'; epoch: number; entry: HistoryEntry }
  | { kind: 'unchanged'; epoch: number }
  | { kind: 'invalid'; issues: ConfigIssue[] }
  | { kind: 'stale'; currentEpoch: number };

export interface WriteRequest {
  readonly document: RawDocument;
  readonly author: string;
  /** The epoch the writer based its change on; undefined = whatever is current. */
  readonly expectedEpoch: number | undefined;
  readonly rollbackOf?: number;
}

export class ConfigStore {
  private constructor(
    private readonly current: RecordStore<string, typeof KvRecords.config.schema>,
    readonly history: ConfigHistory,
    private readonly env: Environment,
    private readonly historyLimit: () => number,
  ) {}

  static async open(bus: Bus, env: Environment, historyLimit: () => number): Promise<ConfigStore> {
    return new ConfigStore(await openRecords(bus, KvRecords.config), await ConfigHistory.open(bus), env, historyLimit);
  }

  async read(): Promise<CurrentConfig | undefined> {
    const found = await this.current.get({});
    return found?.value ? { epoch: found.revision, record: found.value } : undefined;
  }

  validate(document: unknown): { ok: true; config: DbproxyConfig } | { ok: false; issues: ConfigIssue[] } {
    return validateDocument(document, this.env);
  }

  /** Validates and writes a new epoch with compare-and-set on the epoch it was based on. */
  async write(req: WriteRequest): Promise<WriteOutcome> {
    const now = await this.read();
    const currentEpoch = now?.epoch ?? 0;
    if (req.expectedEpoch !== undefined && req.expectedEpoch !== currentEpoch) return { kind: 'stale', currentEpoch };
    const result = this.validate(req.document);
    if (!result.ok) return { kind: 'invalid', issues: result.issues };
    const secrets = literalSecretIssues(req.document, result.config, now?.record.config);
    if (secrets.length > 0) return { kind: 'invalid', issues: secrets };
    const hash = documentHash(req.document);
    if (now && now.record.hash === hash && req.rollbackOf === undefined) return { kind: 'unchanged', epoch: currentEpoch };
    const record: ConfigRecord = {
      config: req.document,
      hash,
      author: req.author,
      appliedAt: new Date().toISOString(),
      ...(req.rollbackOf !== undefined ? { rollbackOf: req.rollbackOf } : {}),
    };
    let epoch: number;
    try {
      epoch = await this.current.put({}, record, { expectedRevision: currentEpoch });
    } catch (err) {
      if (BusErrors.kvRevisionMismatch.is(err)) return { kind: 'stale', currentEpoch: (await this.read())?.epoch ?? 0 };
      throw err;
    }
    if (now) await this.history.record(now.epoch, now.record, this.historyLimit());
    const entry = await this.history.record(epoch, record, this.historyLimit());
    return { kind: 'applied', epoch, entry };
  }

  /** Records epochs written by others (seeds from services' --config files) as they appear. */
  followIntoHistory(onError: (err: unknown) => void) {
    return this.current.watch({}, (found) => {
      if (found.value) this.history.record(found.revision, found.value, this.historyLimit()).catch(onError);
    });
  }
}
