// Recovery: XA RECOVER on every MySQL shard primary; a prepared branch of this coordinator is
// committed when the journal holds its commit decision and rolled back when it does not
// (presumed abort), unless its transaction is running now. Unreachable participants are retried
// at the next pass; a decision is marked done once every participant it names was reached.
import type { Logger } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import type { DecisionJournal } from './journal/decision-journal';
import type { XaMetrics } from './metrics';
import type { MysqlBackend, ParticipantConnections } from './participants/participant-connections';
import { commitBranch, isUnknownXid, recoverBranches, rollbackBranch } from './participants/xa-statements';
import { gtridText, startedAt, type BranchXid, type XidFactory } from './xid';

/** One prepared branch as an operator sees it (GET /xa, `dbproxy xa list`). */
export interface InDoubtBranch {
  readonly xid: string;
  readonly bqual: string;
  readonly formatId: number;
  readonly backend: string;
  readonly shard: string;
  /** Issued by this coordinator (same journal). */
  readonly ours: boolean;
  /** This coordinator's decision: commit (journalled), none (presumed abort), or foreign. */
  readonly decision: 'commit' | 'none' | 'foreign';
  /** Its transaction is running in this process right now. */
  readonly running: boolean;
  /** Seconds since the transaction started (from its gtrid), when known. */
  readonly ageSeconds: number | null;
}

export interface ScanResult {
  readonly branches: InDoubtBranch[];
  readonly raw: { backend: MysqlBackend; xid: BranchXid }[];
  /** Participants that did not answer XA RECOVER, with the reason. */
  readonly unreachable: { backend: string; error: string }[];
}

export interface RecoveryDeps {
  readonly journal: DecisionJournal;
  readonly xids: XidFactory;
  readonly connections: ParticipantConnections;
  readonly backends: () => readonly MysqlBackend[];
  readonly inFlight: ReadonlySet<string>;
  readonly metrics: XaMetrics;
  readonly logger: Logger;
  readonly timeoutMs: number;
}

export class XaRecovery {
  private lastScan: ScanResult | undefined;
  private running: Promise<ScanResult> | undefined;

  constructor(private readonly deps: RecoveryDeps) {}

  primaries(): MysqlBackend[] {
    return this.deps.backends().filter((b) => b.role === 'primary');
  }

  /** Reads every primary's prepared branches without settling any. */
  async scan(): Promise<ScanResult> {
    const { connections, journal, xids, inFlight, timeoutMs } = this.deps;
    const result: ScanResult = { branches: [], raw: [], unreachable: [] };
    await Promise.all(
      this.primaries().map(async (backend) => {
        let conn;
        try {
          conn = await connections.acquire(backend);
          const found = await recoverBranches(conn, Date.now() + timeoutMs);
          connections.release(backend, conn, true);
          for (const xid of found) {
            const text = gtridText(xid.gtrid);
            const ours = xids.owns(text);
            const started = ours ? startedAt(text) : undefined;
            result.raw.push({ backend, xid });
            result.branches.push({
              xid: text,
              bqual: gtridText(xid.bqual),
              formatId: xid.formatId,
              backend: backend.name,
              shard: backend.shard,
              ours,
              decision: !ours ? 'foreign' : journal.decision(text) ? 'commit' : 'none',
              running: inFlight.has(text),
              ageSeconds: started === undefined ? null : Math.max(0, (Date.now() - started) / 1000),
            });
          }
        } catch (err) {
          if (conn) connections.release(backend, conn, false);
          result.unreachable.push({ backend: backend.name, error: errorMessage(err) });
        }
      }),
    );
    return result;
  }

  /** The branches of the last pass (GET /xa reads a fresh scan; this is for metrics and logs). */
  last(): ScanResult | undefined {
    return this.lastScan;
  }

  /** One recovery pass; passes never overlap (a second caller shares the running one). */
  pass(): Promise<ScanResult> {
    this.running ??= this.runPass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runPass(): Promise<ScanResult> {
    const { journal, metrics, logger, inFlight } = this.deps;
    const scan = await this.scan();
    const stillHeld = new Set<string>();
    for (const [i, branch] of scan.branches.entries()) {
      if (!branch.ours || branch.running) {
        if (branch.ours) stillHeld.add(branch.xid);
        continue;
      }
      const { backend, xid } = scan.raw[i] as ScanResult['raw'][number];
      const action = branch.decision === 'commit' ? 'commit' : 'rollback';
      const settled = await this.settle(backend, xid, action);
      if (settled) {
        metrics.settled(action);
        logger.info({ xid: branch.xid, bqual: branch.bqual, backend: backend.name, action }, 'xa recovery settled a prepared branch');
      } else stillHeld.add(branch.xid);
    }
    const reached = new Set(this.primaries().map((b) => b.name).filter((n) => !scan.unreachable.some((u) => u.backend === n)));
    for (const decision of journal.openDecisions()) {
      if (inFlight.has(decision.xid) || stillHeld.has(decision.xid)) continue;
      if (decision.branches.every((b) => reached.has(b.backend))) await journal.recordDone(decision.xid);
    }
    metrics.recoveryPass(scan.unreachable.length === 0 ? 'complete' : 'partial');
    metrics.inDoubtBranches(scan.branches.filter((b) => b.ours).length, scan.branches.filter((b) => !b.ours).length);
    for (const u of scan.unreachable) logger.warn({ backend: u.backend, err: u.error }, 'xa recovery could not reach a participant; retried at the next pass');
    this.lastScan = scan;
    return scan;
  }

  /** XA COMMIT or XA ROLLBACK of one branch; true when it is settled (also when the server no longer knows it). */
  async settle(backend: MysqlBackend, xid: BranchXid, action: 'commit' | 'rollback'): Promise<boolean> {
    const { connections, timeoutMs, logger } = this.deps;
    let conn;
    try {
      conn = await connections.acquire(backend);
      const deadline = Date.now() + timeoutMs;
      await (action === 'commit' ? commitBranch(conn, xid, deadline) : rollbackBranch(conn, xid, deadline));
      connections.release(backend, conn, true);
      return true;
    } catch (err) {
      if (conn) connections.release(backend, conn, isUnknownXid(err));
      if (isUnknownXid(err)) return true;
      logger.warn({ backend: backend.name, xid: gtridText(xid.gtrid), action, err: errorMessage(err) }, 'xa branch could not be settled; retried at the next pass');
      return false;
    }
  }
}
