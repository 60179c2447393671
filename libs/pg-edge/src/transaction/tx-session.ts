// A transaction-mode session: units of work (a simple query, or an extended batch up to Sync) run
// on pooled connections; BEGIN reserves one until the transaction ends, session state pins one for
// life; a lost pinned connection poisons the session. One transition() per state change.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { TLSSocket } from 'node:tls';
import type { Socket } from 'node:net';
import {
  BackendCode as BackendCodeExport,
  decodeBackendMessage,
  encodeBackendMessages,
  encodeFrontendMessages,
  FrontendCode as FrontendCodeExport,
  typedFrameAt,
  type Frame,
} from '@dbproxy/protocol-pg';
import { ReadAfterWriteWindow } from '@dbproxy/routing';
import { pipelines } from '@dbproxy/pool';
import { awaitReplay, currentWalLsn } from './causal-lsn';
import type { SqlRoute, SqlRouter } from '@dbproxy/sql';
import { emptyArray as emptyArrayExport, errorMessage, peerAddress, publishOperationalEvent, sessionCloseKind } from '@dbproxy/util';
import { sendCancelRequest } from '../backend-socket';
import type { ProxyKey } from '../cancel-keys';
import type { EdgeContext, EdgeEpoch, ListenerRole } from '../edge-context';
import { BackendReportedError, isBackendUnavailable, logIfInternal, PgEdgeErrors, toErrorResponse } from '../errors';
import { routeCounters, type RouteCounters } from '../metrics';
import { refuse } from '../session-common';
import { descriptorOf, DirectSocket, PauseHoldTimeout, StateMachine, type SessionSnapshot } from '@dbproxy/runtime';
import { idleTimeout, type IdleWatched } from '../idle-sweep';
import type { BackendConsumer, PgBackendConnection } from './backend-connection';
import type { PgLease } from './backend-pools';
import { BatchPlan, emitQuery, emitRefusal, readyForQuery, refusalBytes } from './batch-plan';
import type { ClientInbox, InboxHandler } from './client-inbox';
import { statementRoutes } from './multi-statement';
import { ResponseRelay, type RelayHooks } from './response-relay';
import { SliceWriter } from './slice-writer';
import { settingsChange } from './startup-parameters';
import { expectation, StatementRegistry, type Expectation } from './statements';
import type { DeadlineWatched } from './running-sessions';
import type { TxShared } from './tx-shared';
import { decideUnit } from './unit-route';
import { ShardedUnits } from './sharding/sharded-units';
import { UnitSpan } from './unit-span';
import { UnitTiming } from './unit-timing';
import { TX_SESSION_STATES, type TxSessionState as State } from './tx-states';
/** Read once: through the package's CommonJS `export *` every access would be a getter call. */
const BackendCode = BackendCodeExport;
const FrontendCode = FrontendCodeExport;
const emptyArray = emptyArrayExport;

const IDLE = 0x49; // 'I'
const IN_TRANSACTION = 0x54; // 'T'
const MAX_PENDING_FRAMES = 4096;
const SETUP: Expectation = expectation('setup', false);
const PROBE: Expectation = expectation('close', false, { probe: true });
/** Close of the unnamed portal (none is open on a connection fresh from the pool): answered without a flush of its own. */
const PROBE_CLOSE = Buffer.from([0x43, 0, 0, 0, 6, 0x50, 0]);

type Emit = (out: SliceWriter, expect: Expectation[]) => void;
/** A unit sent on a connection fresh from the pool: run again once elsewhere if that backend ended before reading it. */
interface Retry {
  readonly emit: Emit;
  readonly synced: boolean;
  readonly fromPlan: boolean;
  readonly name: string;
  readonly reserved: boolean;
}
/** A unit waiting for a pooled connection: what it needs to wait on another backend instead. */
interface Acquiring {
  readonly shard: string;
  readonly role: 'primary' | 'replica';
  readonly reserved: boolean;
  readonly joinable: boolean;
  readonly emit: Emit;
  readonly synced: boolean;
  readonly fromPlan: boolean;
}
interface Flags {
  pin: boolean;
  write: boolean;
  /** The unit was not a replica-safe read: it may have left state (a sequence's currval, a temp table...) that DISCARD ALL must clear. */
  stateful: boolean;
  /** A DEALLOCATE or DISCARD ran: the connection's shared backend statements may be gone. */
  dropsStatements: boolean;
}

export class TransactionSession implements RelayHooks, DeadlineWatched, IdleWatched {
  readonly key: ProxyKey;
  /** Admin id (GET /sessions, DELETE /v1/sessions/{id}), unique fleet-wide. */
  readonly adminId: string;
  /** Kept by the shared RunningSessions while a unit runs. */
  runningSlot = -1;
  private readonly startedAt = Date.now();
  private readonly clientAddress: string;
  /** Fingerprint of the running or last unit's first statement, for admin reports. */
  private statement: string | null = null;
  /** The next unit waits for the operator's pause to end (its frames stay pending). */
  private pauseHeld = false;
  private readonly machine = new StateMachine<State>('pg_transaction_session', 'idle', TX_SESSION_STATES);
  private readonly plan: BatchPlan;
  private readonly relay: ResponseRelay;
  private readonly toBackend = new SliceWriter();
  private readonly window: ReadAfterWriteWindow;
  private readonly pending: Frame[] = [];
  private pendingHead = 0;
  /** The connection the current unit runs on; `held` says whether it stays after the unit. */
  private lease: PgLease | undefined;
  private held: 'transaction' | 'pinned' | undefined;
  private lastStatus = IDLE;
  private readonly flags: Flags = { pin: false, write: false, stateful: false, dropsStatements: false };
  /** The open transaction wrote: its end (COMMIT) opens the read-after-write window, when the write becomes visible. */
  private wroteInTransaction = false;
  /** Causal reads: the primary's WAL position after this session's last committed write; a replica serves its reads once it replayed it. */
  private causalTarget: bigint | undefined;
  /** A refused batch whose Sync has not arrived: the answer waits for it. */
  private refusedUntilSync: Error | undefined;
  /** That refusal's ErrorResponse already went out (a backend lost mid-batch): the Sync gets only ReadyForQuery. */
  private refusalSent = false;
  private deadline = Number.POSITIVE_INFINITY;
  /** When the idle sweep last saw the client's bytes or the session busy (proxy.client_read_timeout_seconds). */
  private lastHeard = performance.now();
  /**
   * The client sent bytes since the sweep last looked: the sweep stamps `lastHeard` then (at most its
   * interval after the bytes came, so a timeout ends late by that, never early), where a clock
   * reading per read cost about as much as relaying the read.
   */
  private heard = false;
  /** A cancel arrived while the unit waited for a connection: it ends with 57014 when one comes. */
  private cancelWhileWaiting = false;
  /** The current unit may run again on another connection (see Retry); cleared when it ends or ran once more. */
  private retry: Retry | undefined;
  /** COPY FROM STDIN data waits for the backend's socket to drain: the client is not read meanwhile. */
  private copyBlocked = false;
  private readonly router: SqlRouter;
  private readonly routeCounters: RouteCounters;
  /** The client socket's descriptor for direct writes; -1 over TLS. */
  private readonly clientFd: number;
  /** The client socket for SliceWriter.flush (written directly on `clientFd`). */
  private readonly clientOut: DirectSocket;
  private readonly spans: UnitSpan;
  private readonly timing: UnitTiming;
  /** Statement sharding ([[postgres.sharding.rules]]): the shard of each unit; undefined without rules. */
  private readonly sharded: ShardedUnits | undefined;
  /** For the operators' session lines. */
  private readonly opened: { readonly at: number; readonly client: string; readonly user: string };
  private readonly clientSide: InboxHandler = {
    onFrame: (frame) => this.onClientFrame(frame),
    onChunkEnd: () => {
      this.heard = true;
      this.pump();
    },
    onClosed: (err) => this.close(err ? `client error: ${err.message}` : 'client closed'),
  };
  private readonly backendSide: BackendConsumer = {
    onFrame: (frame) => (this.machine.is('running') ? this.relay.onFrame(frame) : this.whileHeldIdle(frame)),
    onMessage: (code, buf, start, end) => (this.machine.is('running') ? this.relay.onMessage(code, buf, start, end) : this.whileHeldIdle(typedFrameAt(buf, start, end))),
    onChunkEnd: () => this.flushClient(),
    onLost: (err) => this.onBackendLost(err),
  };

  constructor(
    private readonly client: Socket,
    private readonly inbox: ClientInbox,
    private readonly listener: ListenerRole,
    private readonly edge: EdgeContext,
    private readonly epoch: EdgeEpoch,
    private readonly shared: TxShared,
    private readonly shard: string,
    private readonly user: string,
    /** Tracked startup settings (interned: compared by identity with a pooled connection's). */
    private readonly settings: ReadonlyMap<string, string> = new Map(),
    private readonly database = '',
    /** The handshake route ([[postgres.routes]]) that chose `shard`; null without routes. */
    private readonly route: string | null = null,
  ) {
    this.adminId = edge.sessionIds.allocate();
    this.clientAddress = `${client.remoteAddress ?? ''}:${client.remotePort ?? 0}`;
    const pg = epoch.config.postgres;
    this.spans = new UnitSpan(edge.tracer, { 'dbproxy.user': user, 'dbproxy.listener': listener, 'dbproxy.shard': shard, 'client.address': client.remoteAddress ?? '', ...(route === null ? {} : { 'dbproxy.handshake_route': route }) }, epoch.directory.databaseOf(shard));
    this.timing = new UnitTiming(edge.metrics.latency, listener);
    this.router = shared.router(epoch);
    this.sharded = ShardedUnits.of(epoch, this.router, user);
    this.plan = new BatchPlan(new StatementRegistry(pg.max_prepared_statements), shared.statementRoutesOf(this.router), this.sharded?.executionRoute, (err) =>
      logIfInternal(edge.logger, err, { session: this.adminId, while: 'planning' }),
    );
    this.routeCounters = routeCounters(edge.metrics, listener);
    this.clientFd = client instanceof TLSSocket ? -1 : descriptorOf(client);
    this.clientOut = new DirectSocket(client, this.clientFd);
    this.relay = new ResponseRelay({ maxRows: pg.max_result_rows, maxBytes: pg.max_result_bytes, budget: shared.resultBudget }, this);
    this.window = new ReadAfterWriteWindow(pg.read_after_write_seconds * 1000);
    this.key = edge.cancelKeys.issue(() => this.cancelRequested());
    this.opened = { at: Date.now(), client: peerAddress(client), user };
    publishOperationalEvent({ event: 'session_opened', protocol: 'postgres', session: this.key.processId, client: this.opened.client, user, database: epoch.directory.databaseOf(shard) ?? null, listener, tls: client instanceof TLSSocket, ...(route === null ? {} : { route, shard }) });
  }

  start(): void {
    this.edge.metrics.sessions.inc({ mode: 'transaction', listener: this.listener });
    this.edge.idle.watch(this);
    this.inbox.deliverTo(this.clientSide);
  }

  get state(): State {
    return this.machine.state;
  }

  // ---- client side ----

  private onClientFrame(frame: Frame): void {
    this.pending.push(frame);
    if (this.pending.length - this.pendingHead > MAX_PENDING_FRAMES) this.inbox.pause();
  }

  private pump(): void {
    while (this.pendingHead < this.pending.length) {
      if (this.relay.copyingIn && this.lease) this.toCopy(this.pending[this.pendingHead++]);
      else if (this.pauseHeld) break;
      else if (this.accepting()) {
        const frame = this.pending[this.pendingHead] as Frame;
        if (this.edge.pause.paused && this.lastStatus === IDLE && this.machine.is('idle') && startsUnit(frame.code)) {
          this.holdForPause();
          break;
        }
        this.pendingHead++;
        this.handle(frame);
      } else break;
    }
    if (!this.toBackend.empty && this.lease) this.flushCopy();
    if (this.pendingHead === this.pending.length && this.pendingHead > 0) {
      emptyArray(this.pending);
      this.pendingHead = 0;
      if (!this.copyBlocked) this.inbox.resume();
    }
  }

  /**
   * COPY FROM STDIN: the client's messages go to the backend as they came (it ignores Flush and
   * Sync, and a message of another kind ends the COPY with its error, as it would directly) until
   * CopyDone or CopyFail, and in the extended protocol until the client's Sync after them, which
   * the backend waits for (it ignored the batch's own). Its answers end the unit with ReadyForQuery.
   */
  private toCopy(frame: Frame): void {
    this.toBackend.addFrame(frame);
    const code = frame.code;
    const relay = this.relay;
    if (code === FrontendCode.CopyDone || code === FrontendCode.CopyFail) {
      if (relay.copyingIn === 'simple') relay.copyingIn = undefined;
      else relay.copyEnded = true;
    } else if (code === FrontendCode.Sync && relay.copyEnded) {
      relay.copyingIn = undefined;
    }
    // a COPY that moves data is not stuck: the unit's deadline counts from its last data
    this.deadline = performance.now() + this.epoch.config.postgres.query_timeout_seconds * 1000;
  }

  /** Writes copied data; while the backend's socket is full the client is not read. */
  private flushCopy(): void {
    const connection = this.connection();
    if (this.toBackend.flush(connection.direct) || this.copyBlocked) return;
    this.copyBlocked = true;
    this.inbox.pause();
    connection.stream.once('drain', () => {
      this.copyBlocked = false;
      this.inbox.resume();
    });
  }

  /** The edge is paused: the unit waits until resume, or is refused after the hold timeout. */
  private holdForPause(): void {
    this.pauseHeld = true;
    this.edge.pause.hold().then(
      () => this.releaseHeld(undefined),
      (err: unknown) => this.releaseHeld(PgEdgeErrors.pauseTimeout(err instanceof PauseHoldTimeout ? err.seconds : 0)),
    );
  }

  private releaseHeld(refusal: Error | undefined): void {
    this.pauseHeld = false;
    if (this.machine.is('closed')) return;
    if (refusal) {
      const frame = this.pending[this.pendingHead] as Frame;
      if (frame.code === FrontendCode.Query) {
        this.pendingHead++;
        this.client.write(refusalBytes(refusal, this.lastStatus));
      } else this.refusedUntilSync = refusal; // the batch's messages are dropped; its Sync gets the error
    }
    this.pump();
  }

  /** This session as GET /sessions shows it. */
  describe(): SessionSnapshot {
    const state = this.machine.state;
    const shown = this.pauseHeld ? 'held' : state === 'running' ? (this.lease ? 'running' : 'waiting') : state === 'in_transaction' ? 'in transaction' : state === 'batch_open' ? 'running' : state;
    return {
      id: this.adminId,
      clientAddress: this.clientAddress,
      user: this.user,
      database: this.database,
      listener: this.listener,
      state: shown,
      statement: this.statement,
      backend: this.lease?.backend ?? null,
      pinnedReason: this.held === 'pinned' ? 'session state' : this.held === 'transaction' ? 'transaction' : null,
      epoch: this.epoch.epoch,
      startedAt: this.startedAt,
      bytesIn: this.client.bytesRead,
      bytesOut: this.client.bytesWritten + (this.clientFd >= 0 ? this.relay.out.flushed : 0),
      route: this.route,
      shard: this.shard,
    };
  }

  /** An operator closed the session: FATAL 57P01 with the reason; a statement running on a connection of its own is cancelled. */
  terminate(reason: string): void {
    if (this.machine.is('closed')) return;
    if (this.lease && this.machine.is('running') && !this.lease.connection.shared) cancelOnBackend(this.lease);
    this.fatal(PgEdgeErrors.adminTerminated(reason));
  }

  private accepting(): boolean {
    const state = this.machine.state;
    return state !== 'running' && state !== 'closed' && state !== 'poisoned';
  }

  private handle(frame: Frame): void {
    switch (frame.code) {
      case FrontendCode.Query:
        if (this.machine.is('batch_open')) return this.fatal(PgEdgeErrors.protocol('Query inside an unfinished extended-protocol batch'));
        return this.runSimple(frame);
      case FrontendCode.Parse:
      case FrontendCode.Bind:
      case FrontendCode.Describe:
      case FrontendCode.Execute:
      case FrontendCode.Close:
      case FrontendCode.Flush:
      case FrontendCode.Sync:
        return this.addToBatch(frame);
      case FrontendCode.Terminate:
        return this.close('client terminated');
      case FrontendCode.CopyData:
      case FrontendCode.CopyDone:
      case FrontendCode.CopyFail:
        return; // outside COPY the server ignores these too
      case FrontendCode.FunctionCall:
        return this.refuseUnit(PgEdgeErrors.unsupportedStatement('the function-call protocol'), true, false);
      default:
        return this.fatal(PgEdgeErrors.protocol(`unexpected message ${String.fromCharCode(frame.code)}`));
    }
  }

  private runSimple(frame: Frame): void {
    // the text lies after the header, before the terminating NUL
    const source = frame.source ?? frame.bytes;
    const start = (frame.source === undefined ? 0 : (frame.start as number)) + 5;
    const end = (frame.source === undefined ? source.length : (frame.end as number)) - 1;
    // a statement of a known shape is routed from its bytes; its text is decoded only where it is read
    const known = this.router.routeKnownBytes(source, start, end);
    if (known !== undefined && this.sharded === undefined && known.classification.statementCount <= 1) {
      return this.runUnit([known], true, (out, expect) => emitQuery(frame, out, expect), false);
    }
    const sql = source.toString('utf8', start, end);
    const route = known ?? this.router.route(sql);
    const local = this.lease ? undefined : this.sharded?.deferred.answer(route, sql);
    if (local) {
      this.lastStatus = (this.sharded as ShardedUnits).deferred.status;
      return void this.client.write(local);
    }
    const routes = statementRoutes(this.router, sql, route);
    this.runUnit(routes, true, (out, expect) => emitQuery(frame, out, expect), false, routes, sql);
  }

  private addToBatch(frame: Frame): void {
    const progress = this.plan.add(frame);
    if (progress === 'pending') return;
    const synced = progress === 'sync';
    if (this.refusedUntilSync) {
      if (!synced) return this.plan.discard();
      const error = this.refusedUntilSync;
      this.refusedUntilSync = undefined;
      this.plan.discard();
      this.client.write(this.refusalSent ? readyForQuery(this.lastStatus) : refusalBytes(error, this.lastStatus));
      this.refusalSent = false;
      return;
    }
    this.runUnit([...this.plan.routes], synced, (out, expect) => this.plan.emit(this.connection(), out, expect), true, [...this.plan.executions]);
  }

  // ---- units ----

  /** `executions`: the statements that decide the shard (the simple query, or the batch's bound executions); `sql`: a simple query's text. */
  private runUnit(routes: readonly SqlRoute[], synced: boolean, emit: Emit, fromPlan = true, executions: readonly SqlRoute[] = routes, sql?: string): void {
    // one clock reading for the unit's start, its pool wait and its send while they happen in this call
    // (a unit sent at once: no wait; the routing's microseconds count to the backend's time)
    const now = performance.now();
    const decision = decideUnit(routes, this.listener, this.window.requiresPrimary(now));
    this.edge.counts.statements++;
    if (routes.length > 0) this.statement = (routes[0] as SqlRoute).fingerprint.text;
    this.retry = undefined;
    this.spans.begin(routes);
    this.timing.begin(now);
    if (decision.kind === 'refuse') {
      if (decision.reason === 'read_only') this.edge.metrics.readOnlyRejections.inc({ listener: this.listener });
      this.edge.metrics.routingFailures.inc({ reason: decision.reason });
      return this.refuseUnit(decision.error, synced, fromPlan);
    }
    let shard = this.shard;
    if (this.sharded) {
      const unit = this.sharded.unitShard(executions, this.lease ? this.epoch.directory.config(this.lease.backend)?.shard : undefined);
      if (unit.kind === 'refuse') {
        this.edge.metrics.routingFailures.inc({ reason: unit.reason });
        return this.refuseUnit(unit.error, synced, fromPlan);
      }
      if (unit.kind === 'fanout') return this.runOnEveryShard(unit.shards, executions[0], sql, synced, fromPlan);
      shard = unit.shard;
      this.edge.metrics.shardUnits.inc({ shard });
    }
    this.flags.pin ||= decision.pin;
    this.flags.write ||= decision.write;
    // a unit without statements (a Sync alone, the rest of a batch after Flush) changes nothing itself
    this.flags.stateful ||= routes.length > 0 && !decision.pipelinable;
    if (decision.pin) this.flags.dropsStatements ||= routes.some(dropsStatements);
    if (this.lease) {
      this.routeCounters.held.inc();
      this.timing.onHeld(this.lease.backend);
      if (this.held) this.spans.onHeld(this.held, this.lease.backend, this.epoch.directory.config(this.lease.backend)?.address);
      return this.dispatch(emit, now);
    }
    const pg = this.epoch.config.postgres;
    let name: string;
    try {
      const choice = this.epoch.directory.require(shard, decision.role, this.shared.pools, pg.fallback_to_primary, pg.read_consistency === 'causal' ? this.shared.replay.caughtUp(this.causalTarget) : undefined);
      if (choice.fellBack) this.routeCounters.fallback.inc();
      const target = choice.target as NonNullable<typeof choice.target>;
      name = target.config.name;
      if (this.causalTarget !== undefined && decision.role === 'replica' && target.role !== 'replica') this.shared.replay.count('primary');
      this.routeCounters[target.role].inc();
      this.spans.acquiring(name, target.config.address, target.role, choice.fellBack);
      this.timing.acquiring(choice.fellBack ? 'fallback' : target.role, name, now);
    } catch (err) {
      this.edge.metrics.routingFailures.inc({ reason: 'no_backend' });
      return this.refuseUnit(err instanceof Error ? err : new Error(String(err)), synced, fromPlan);
    }
    this.machine.transition(this.machine.state, 'running', this.acquireReason(name));
    const depth = pg.pipeline_depth;
    // a transaction BEGIN opened here goes to the connection first: it is held from now on
    const reserved = decision.reserved || this.sharded?.deferred.pending === true;
    const joinable = pipelines(depth) && synced && decision.pipelinable && !reserved && this.causalTarget === undefined;
    // a sharded unit may carry a deferred BEGIN: it does not run again
    if (!this.sharded) this.retry = { emit: fromPlan ? (out, expect) => this.plan.emitAgain(this.connection(), out, expect) : emit, synced, fromPlan, name, reserved };
    const idle = this.shared.pools.tryAcquire(name, reserved, joinable);
    if (idle) return this.onLease(idle, emit, synced, fromPlan, now);
    const joined = joinable ? this.shared.pools.tryJoin(name, depth) : undefined;
    if (joined) {
      this.edge.metrics.pipelinedUnits.inc();
      return this.onLease(joined, emit, synced, fromPlan, now);
    }
    this.cancelWhileWaiting = false;
    this.spans.waiting();
    this.acquireOn(name, { shard, role: decision.role, reserved, joinable, emit, synced, fromPlan });
  }

  private lastAcquired = '';
  private lastAcquireReason = '';

  /** The transition's reason, built once per backend name in a row (not once per unit). */
  private acquireReason(name: string): string {
    if (name !== this.lastAcquired) {
      this.lastAcquired = name;
      this.lastAcquireReason = `acquire ${name}`;
    }
    return this.lastAcquireReason;
  }

  /** Waits for a connection of `name`; a replica that cannot be connected to (nothing was sent) gives way to another backend. */
  private acquireOn(name: string, unit: Acquiring): void {
    this.shared.pools.acquire(name, unit.reserved, unit.joinable).then(
      (lease) => this.onLease(lease, unit.emit, unit.synced, unit.fromPlan),
      (err: unknown) => {
        const next = this.machine.is('running') && !this.cancelWhileWaiting ? this.elsewhere(name, err, unit) : undefined;
        if (next === undefined) return this.onAcquireFailed(name, err, unit.synced, unit.fromPlan);
        if (this.retry) this.retry = { ...this.retry, name: next };
        this.acquireOn(next, { ...unit, joinable: false });
      },
    );
  }

  /** The backend to try after `failed` refused a new connection: another replica, or the primary (fallback_to_primary); undefined when none. */
  private elsewhere(failed: string, err: unknown, unit: Acquiring): string | undefined {
    if (unit.role !== 'replica' || !isConnectFailure(err) || this.epoch.directory.config(failed)?.role !== 'replica') return undefined;
    this.epoch.directory.markUnreachable(failed);
    const choice = this.epoch.directory.replica(unit.shard, this.shared.pools, this.epoch.config.postgres.fallback_to_primary);
    const target = choice.target;
    if (!target || target.config.name === failed) return undefined;
    this.edge.logger.debug({ backend: failed, err: errorMessage(err) }, 'replica refused a connection: trying another backend');
    this.edge.metrics.connectRetries.inc({ mode: 'transaction', to: target.role });
    if (choice.fellBack) this.routeCounters.fallback.inc();
    return target.config.name;
  }

  /** `now`: the unit's clock reading when the lease came in the same call (none after a wait). */
  private onLease(lease: PgLease, emit: Emit, synced: boolean, fromPlan: boolean, now?: number): void {
    if (!this.machine.is('running')) return this.shared.pools.release(lease, true);
    if (this.cancelWhileWaiting) {
      this.shared.pools.release(lease, true);
      return this.onAcquireFailed(lease.backend, PgEdgeErrors.queryCanceled(), synced, fromPlan);
    }
    const target = this.causalTarget;
    if (target !== undefined && this.epoch.config.postgres.read_consistency === 'causal' && this.epoch.directory.config(lease.backend)?.role === 'replica') {
      if (!this.shared.replay.known(lease.backend, target)) return this.awaitReplica(lease, target, emit, synced, fromPlan);
      this.shared.replay.count('replica_now');
    }
    this.takeLease(lease, emit, synced, fromPlan, now);
  }

  /** Causal reads: the replica runs the unit once it replayed `target` (polled up to causal_wait_ms), else the primary does. */
  private awaitReplica(lease: PgLease, target: bigint, emit: Emit, synced: boolean, fromPlan: boolean): void {
    const pg = this.epoch.config.postgres;
    awaitReplay(lease.connection, lease.backend, target, pg.causal_wait_ms, this.shared.replay, pg.query_timeout_seconds * 1000).then(
      (outcome) => {
        if (!this.machine.is('running') || this.cancelWhileWaiting) {
          this.shared.pools.release(lease, true);
          if (this.machine.is('running')) this.onAcquireFailed(lease.backend, PgEdgeErrors.queryCanceled(), synced, fromPlan);
          return;
        }
        if (outcome !== 'primary') return this.takeLease(lease, emit, synced, fromPlan);
        this.shared.pools.release(lease, true);
        const shard = this.epoch.directory.config(lease.backend)?.shard ?? this.shard;
        const primary = this.epoch.directory.require(shard, 'primary', this.shared.pools, false).target?.config.name;
        if (primary === undefined) return this.onAcquireFailed(lease.backend, PgEdgeErrors.queryCanceled(), synced, fromPlan);
        if (this.retry) this.retry = { ...this.retry, name: primary };
        this.acquireOn(primary, { shard, role: 'primary', reserved: false, joinable: false, emit, synced, fromPlan });
      },
      (err: unknown) => {
        this.shared.pools.release(lease, false, 'causal-check-failed');
        if (this.machine.is('running')) this.onAcquireFailed(lease.backend, err, synced, fromPlan);
      },
    );
  }

  private takeLease(lease: PgLease, emit: Emit, synced: boolean, fromPlan: boolean, now = performance.now()): void {
    this.lease = lease;
    lease.connection.unnamedHolds = undefined;
    this.spans.acquired();
    this.timing.acquired(now);
    const begin = this.sharded?.deferred.take();
    if (begin === undefined) return this.dispatch(emit, now);
    this.sharded?.openTransaction(lease.connection, begin).then(
      () => {
        if (this.machine.is('running') && this.lease === lease) this.dispatch(emit);
      },
      (err: unknown) => {
        if (!this.machine.is('running') || this.lease !== lease) return;
        this.lease = undefined;
        this.shared.pools.release(lease, false, 'failed-begin');
        this.machine.transition('running', 'idle', 'BEGIN failed');
        this.refuseUnit(err instanceof Error ? err : new Error(String(err)), synced, fromPlan);
        this.pump();
      },
    );
  }

  /** A read with keys on several shards (multi_shard = "all_shards"): every shard answers, the rows are concatenated. */
  private runOnEveryShard(shards: readonly string[], route: SqlRoute, sql: string | undefined, synced: boolean, fromPlan: boolean): void {
    const execution = sql === undefined ? this.plan.soleExecution() : undefined;
    if (sql === undefined && execution === undefined) {
      this.edge.metrics.routingFailures.inc({ reason: 'multi_shard' });
      return this.refuseUnit(PgEdgeErrors.unsupportedStatement('a read on every shard in an extended-protocol batch other than [Parse] Bind [Describe] Execute Sync'), synced, fromPlan);
    }
    const statement = execution ? ({ kind: 'extended', execution } as const) : ({ kind: 'simple', sql: sql as string } as const);
    const sharded = this.sharded as ShardedUnits;
    for (const shard of shards) this.edge.metrics.shardUnits.inc({ shard });
    this.machine.transition(this.machine.state, 'running', 'read on every shard');
    const replica = route.replicaEligible && !this.window.requiresPrimary(performance.now()) && this.causalTarget === undefined;
    const finish = (bytes: Buffer, failed: boolean, error?: Error) => {
      if (!this.machine.is('running')) return;
      if (fromPlan && failed) this.plan.discard();
      else if (fromPlan) this.plan.answered();
      this.spans.end(error);
      this.timing.dropped();
      this.client.write(bytes);
      this.machine.transition('running', 'idle', 'read on every shard answered');
      this.pump();
    };
    sharded.readOnEveryShard(this.shared.pools, { statement, shards, replica }, this.epoch.config.postgres.query_timeout_seconds * 1000).then(
      (answer) => finish(Buffer.concat([answer.bytes, readyForQuery(IDLE)]), answer.failed),
      (err: unknown) => {
        logIfInternal(this.edge.logger, err, { session: this.adminId, while: 'read on every shard' });
        finish(refusalBytes(err instanceof Error ? err : new Error(String(err)), IDLE), true, err instanceof Error ? err : undefined);
      },
    );
  }

  private onAcquireFailed(name: string, err: unknown, synced: boolean, fromPlan: boolean): void {
    if (!this.machine.is('running')) return;
    this.edge.metrics.routingFailures.inc({ reason: 'acquire' });
    this.flags.pin = this.flags.write = this.flags.stateful = this.flags.dropsStatements = false;
    this.machine.transition('running', 'idle', 'acquire failed');
    const cancelled = this.cancelWhileWaiting;
    this.cancelWhileWaiting = false;
    // a backend that cannot be connected to is a connection failure (08006), not a full pool (53300)
    const error = cancelled ? PgEdgeErrors.queryCanceled() : isConnectFailure(err) ? PgEdgeErrors.backendConnect.withCause(err, name, errorMessage(err)) : PgEdgeErrors.acquireTimeout.withCause(err, name, errorMessage(err));
    if (isBackendUnavailable(error)) this.edge.logger.warn({ backend: name, err }, 'pg-edge could not open a backend connection');
    this.refuseUnit(error, synced, fromPlan);
    this.pump();
  }

  /** Sends the unit (or the next part of an open batch) on the session's connection. */
  private dispatch(emit: Emit, now = performance.now()): void {
    const conn = this.connection();
    if (!this.machine.is('running')) this.machine.transition(this.machine.state, 'running', 'dispatch');
    if (this.relay.pending === 0) this.relay.reset();
    conn.attach(this.backendSide);
    if (conn.shared) conn.holdWrites();
    if (this.retry && !conn.shared) this.probe();
    if (conn.settings !== this.settings) this.applySettings(conn);
    emit(this.toBackend, this.relay.expectations);
    this.toBackend.flush(conn.direct);
    this.timing.sent(now);
    this.deadline = now + this.epoch.config.postgres.query_timeout_seconds * 1000;
    this.shared.running.add(this);
    if (this.relay.pending === 0) this.drained();
  }

  /**
   * A Close of the unnamed portal ahead of the unit: PostgreSQL answers it (CloseComplete, buffered
   * with the unit's own answers: no extra packet) before it reads the unit, so a FATAL (or a close)
   * before it means the backend ended without reading the unit (an idle pooled connection
   * terminated by pg_terminate_backend or idle_session_timeout while it was being lent). A FATAL
   * while the unit runs comes after it: PostgreSQL flushes what it buffered before the FATAL.
   */
  private probe(): void {
    this.toBackend.addApart(PROBE_CLOSE);
    this.relay.expectations.push(PROBE);
  }

  /** The unit's backend ended before it read the unit: the unit runs once more on another connection. */
  private retryUnread(): boolean {
    const retry = this.retry;
    const lease = this.lease;
    if (!retry || !lease || this.held || !this.machine.is('running') || !this.relay.unitUnread()) return false;
    this.retry = undefined;
    this.lease = undefined;
    this.edge.logger.debug({ backend: lease.backend }, 'backend ended before reading the unit: running it on another connection');
    this.shared.pools.release(lease, false, 'lost-before-unit', this.backendSide);
    this.shared.running.delete(this);
    this.relay.reset();
    this.shared.pools.acquire(retry.name, retry.reserved, false).then(
      (again) => this.onLease(again, retry.emit, retry.synced, retry.fromPlan),
      (err: unknown) => {
        if (retry.fromPlan) this.plan.forgetEmitted();
        this.onAcquireFailed(retry.name, err, retry.synced, retry.fromPlan);
      },
    );
    return true;
  }

  /** The connection takes the session's startup settings before its statements (its answers are swallowed by the relay). */
  private applySettings(conn: PgBackendConnection): void {
    const change = settingsChange(conn.settings, this.settings);
    conn.settings = this.settings;
    if (change === undefined) return;
    this.toBackend.add(encodeFrontendMessages({ type: 'Query', sql: change }));
    this.relay.expectations.push(SETUP);
    conn.expectExtraReady(this.backendSide);
  }

  /** A refusal without running anything; in a held transaction the backend must fail too, so it aborts as PostgreSQL would. */
  private refuseUnit(error: Error, synced: boolean, fromPlan = true): void {
    logIfInternal(this.edge.logger, error, { session: this.adminId, state: this.machine.state });
    if (this.lease) this.spans.refused(error);
    else {
      this.spans.end(error);
      this.timing.dropped();
    }
    if (this.lease && fromPlan) {
      this.plan.refuseAll(error);
      return this.dispatch((out, expect) => this.plan.emit(this.connection(), out, expect));
    }
    if (this.lease) {
      return this.dispatch((out, expect) => emitRefusal(out, expect, error));
    }
    if (fromPlan) this.plan.discard();
    const status = this.sharded ? this.sharded.deferred.refusedStatus() : IDLE;
    if (this.sharded) this.lastStatus = status;
    if (!synced) this.refusedUntilSync = error;
    else this.client.write(refusalBytes(error, status));
  }

  private connection() {
    return (this.lease as PgLease).connection;
  }

  // ---- backend answers (RelayHooks) ----

  ready(status: number): void {
    this.retry = undefined;
    const lease = this.lease as PgLease;
    const conn = lease.connection;
    conn.noteStatus(status);
    this.shared.running.delete(this);
    if (this.relay.sawParameterStatus || this.flags.stateful) conn.dirty = true;
    if (this.flags.dropsStatements) {
      conn.statements.clear();
      conn.unnamedHolds = undefined;
    }
    const failure = this.relay.draining;
    if (failure && status === IN_TRANSACTION) return this.abortOnBackend(failure);
    this.spans.end(failure, this.relay.sqlState);
    this.timing.answered();
    if (failure) {
      this.relay.out.add(refusalBytes(failure, status));
      this.relay.draining = undefined;
    }
    const wrote = this.flags.write || this.wroteInTransaction;
    if (wrote && status === IDLE && this.capturesCommit()) return this.captureCommit(lease, status);
    if (wrote) this.window.noteWrite(performance.now());
    this.endUnit(lease, status, wrote);
  }

  private endUnit(lease: PgLease, status: number, wrote: boolean): void {
    this.wroteInTransaction = wrote && status !== IDLE;
    this.lastStatus = status;
    this.afterUnit(lease, status);
    this.flushClient();
    this.pump();
  }

  /** Causal reads: a committed write on a connection that goes back to the pool (a pinned session reads on it anyway). */
  private capturesCommit(): boolean {
    return this.epoch.config.postgres.read_consistency === 'causal' && this.held !== 'pinned' && !this.flags.pin;
  }

  /**
   * The write committed: before the client hears ReadyForQuery, the primary's WAL position (at or
   * past the commit) becomes what replicas must have replayed; the window applies when it cannot be read.
   */
  private captureCommit(lease: PgLease, status: number): void {
    const conn = lease.connection;
    conn.detach(this.backendSide);
    const done = (lsn: bigint | null) => {
      if (!this.machine.is('running') || this.lease !== lease) return;
      if (lsn === null) this.window.noteWrite(performance.now());
      else {
        // the transaction's earlier statements opened the window: the commit's position replaces it
        this.window.reset();
        this.causalTarget = lsn;
      }
      this.endUnit(lease, status, true);
    };
    currentWalLsn(conn, this.epoch.config.postgres.query_timeout_seconds * 1000).then(done, () => done(null));
  }

  private afterUnit(lease: PgLease, status: number): void {
    const next = this.held === 'pinned' || this.flags.pin ? 'pinned' : status !== IDLE ? 'transaction' : undefined;
    if (next) this.shared.pools.hold(lease);
    if (next && next !== this.held) {
      if (next === 'pinned') this.edge.metrics.sessionPins.inc({ listener: this.listener });
      else this.edge.metrics.transactionPins.inc({ listener: this.listener });
    }
    if (next) lease.connection.dirty = true;
    const ended = this.held !== undefined && next === undefined;
    this.held = next;
    this.flags.pin = this.flags.write = this.flags.stateful = this.flags.dropsStatements = false;
    if (!next) {
      this.lease = undefined;
      this.shared.pools.release(lease, true, undefined, this.backendSide);
    }
    const to = next === 'pinned' ? 'pinned' : next === 'transaction' ? 'in_transaction' : 'idle';
    this.machine.transition('running', to, ended ? 'transaction ended' : 'ready for query');
  }

  /** The transaction is still open on the backend but the client must see it fail: fail it there. */
  private abortOnBackend(error: Error): void {
    this.spans.refused(error);
    this.relay.reset();
    this.dispatch((out, expect) => emitRefusal(out, expect, error));
  }

  drained(): void {
    if (!this.machine.is('running') || this.relay.awaitsReady()) return;
    this.shared.running.delete(this);
    this.flushClient();
    if (this.relay.draining) this.refusedUntilSync = this.relay.draining;
    this.machine.transition('running', 'batch_open', 'flush answered');
    this.pump();
  }

  fail(error: Error, fatal: boolean): void {
    logIfInternal(this.edge.logger, error, { session: this.adminId, state: this.machine.state });
    this.retry = undefined;
    if (!fatal && this.held) return this.relay.drain(error);
    if (this.held) return this.poison(error);
    const lease = this.lease;
    const synced = this.relay.awaitsReady();
    this.lease = undefined;
    if (lease) this.shared.pools.release(lease, false, 'failed-unit', this.backendSide);
    this.shared.running.delete(this);
    this.relay.drain(error);
    if (synced) this.relay.out.add(refusalBytes(error, IDLE));
    else {
      // as PostgreSQL: the error now (a client fetching with Execute + Flush waits for it), then nothing until Sync
      this.relay.out.add(encodeBackendMessages(toErrorResponse(error)));
      this.refusedUntilSync = error;
      this.refusalSent = true;
    }
    this.relay.reset();
    this.flags.pin = this.flags.write = this.flags.stateful = this.flags.dropsStatements = false;
    this.spans.end(error);
    this.timing.dropped();
    this.machine.transition('running', 'idle', `unit failed: ${error.message}`);
    this.flushClient();
    this.pump();
  }

  /** The client's COPY data follows (pump sends it while the relay is copying in). */
  copyIn(): void {
    queueMicrotask(() => this.pump());
  }

  /**
   * The backend's FATAL ends only its connection (pg_terminate_backend, a crash): an unheld session
   * gets one ERROR with the backend's words and goes on; a held one loses its state, so one FATAL and close.
   */
  backendFatal(frame: Frame): void {
    if (this.retryUnread()) return;
    const message = decodeBackendMessage(frame);
    if (this.held || message.type !== 'ErrorResponse') return this.onBackendLost(PgEdgeErrors.protocol('backend FATAL'));
    this.fail(new BackendReportedError(message), true);
  }

  /** A held connection speaks while no unit runs: notifications and notices go through; a FATAL ends the session. */
  private whileHeldIdle(frame: Frame): void {
    const code = frame.code;
    if (code === BackendCode.NotificationResponse || code === BackendCode.NoticeResponse || code === BackendCode.ParameterStatus) return this.relay.out.add(frame.bytes);
    this.onBackendLost(PgEdgeErrors.protocol(`backend sent ${String.fromCharCode(frame.code)} outside a query`));
  }

  private onBackendLost(err: Error): void {
    if (this.machine.is('closed') || this.machine.is('poisoned')) return;
    this.edge.logger.debug({ err: err.message }, 'backend connection lost');
    if (this.held) return this.poison(PgEdgeErrors.sessionPoisoned(this.held === 'pinned' ? 'session state' : 'transaction'));
    if (this.retryUnread()) return;
    if (this.machine.is('running') && this.lease) return this.fail(PgEdgeErrors.backendLost(this.lease.backend), true);
    // A batch answered up to its Flush: the rest of it, up to Sync, gets the error (it cannot run anywhere else).
    if (this.machine.is('batch_open') && this.lease) {
      this.machine.transition('batch_open', 'running', 'backend lost');
      this.fail(PgEdgeErrors.backendLost(this.lease.backend), true);
    }
  }

  checkDeadline(nowMs: number): void {
    if (!this.machine.is('running') || nowMs < this.deadline || !this.lease) return;
    // Queued with other sessions' units, a cancel could hit theirs: the answers are dropped instead.
    if (!this.lease.connection.shared) cancelOnBackend(this.lease);
    this.fail(PgEdgeErrors.queryTimeout(this.epoch.config.postgres.query_timeout_seconds), true);
  }

  /** The idle sweep: a session that waits for its client (no unit running or queued) ends after client_read_timeout_seconds of silence. */
  checkIdle(nowMs: number): void {
    if (this.heard || this.machine.is('running') || this.pendingHead < this.pending.length || this.copyBlocked) {
      this.heard = false;
      this.lastHeard = nowMs;
      return;
    }
    const timeoutMs = this.epoch.config.proxy.client_read_timeout_seconds * 1000;
    if (nowMs - this.lastHeard < timeoutMs || this.machine.is('closed') || this.machine.is('poisoned')) return;
    this.edge.metrics.clientTimeouts.inc({ mode: 'transaction', kind: 'idle' });
    this.fatal(idleTimeout(this.machine.is('in_transaction') || this.lastStatus !== IDLE, timeoutMs));
  }

  /** A client CancelRequest: the backend gets a real cancel; while waiting for a connection, the unit ends with 57014. */
  cancelRequested(): void {
    if (!this.machine.is('running') || this.sharded?.cancelRunning()) return;
    if (this.lease?.connection.shared) this.fail(PgEdgeErrors.queryCanceled(), true);
    else if (this.lease) cancelOnBackend(this.lease);
    else this.cancelWhileWaiting = true;
  }

  // ---- output and endings ----

  private flushClient(): void {
    const out = this.relay.out;
    if (out.empty) return;
    if (out.flush(this.clientOut) || !this.lease) return;
    // other sessions' units share the connection: not paused for this client (max_result_bytes bounds what waits)
    if (this.lease.connection.shared) return;
    const stream = this.lease.connection.stream;
    stream.pause();
    this.client.once('drain', () => stream.resume());
  }

  private poison(error: Error): void {
    if (this.machine.is('closed') || this.machine.is('poisoned')) return;
    this.edge.metrics.sessionsPoisoned.inc({ reason: this.held ?? 'unit' });
    this.flushClient();
    refuse(this.client, toErrorResponse(error, 'FATAL'));
    this.machine.transition(this.machine.state, 'poisoned', error.message);
    this.close('poisoned');
  }

  private fatal(error: Error): void {
    logIfInternal(this.edge.logger, error, { session: this.adminId, state: this.machine.state });
    refuse(this.client, toErrorResponse(error, 'FATAL'));
    this.close(error.message);
  }

  /** The shutdown deadline passed with the session still open: FATAL 57P01, as a PostgreSQL server shutting down, then close. */
  shutDown(): void {
    if (this.machine.is('closed')) return;
    this.fatal(PgEdgeErrors.shutdownTerminated());
  }

  /** Ends the session: a held connection is closed (PostgreSQL rolls back what was open), never reused. */
  close(reason: string): void {
    if (this.machine.is('closed')) return;
    this.machine.transition(this.machine.state, 'closed', reason);
    this.spans.abandon(reason);
    this.timing.dropped();
    const { at, client, user } = this.opened;
    publishOperationalEvent({ event: 'session_closed', protocol: 'postgres', session: this.key.processId, client, user, listener: this.listener, duration_ms: Date.now() - at, ...(this.route === null ? {} : { route: this.route }), reason: sessionCloseKind(reason), detail: reason });
    this.edge.metrics.sessions.dec({ mode: 'transaction', listener: this.listener });
    this.edge.cancelKeys.revoke(this.key);
    this.edge.idle.unwatch(this);
    this.shared.running.delete(this);
    const lease = this.lease;
    this.lease = undefined;
    if (lease) this.shared.pools.release(lease, false, this.held ? 'session-closed' : 'client-gone', this.backendSide);
    if (!this.client.destroyed) this.client.end();
    setTimeout(() => this.client.destroy(), 1000).unref();
  }
}

/** The pool could not open a connection (refused, timed out, TLS or authentication failed): nothing reached the backend. */
function isConnectFailure(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 'DBP_ERR_POOL_CREATE_FAILED';
}

/** DEALLOCATE and DISCARD (which pin the session) may drop statements the connection prepared for its clients. */
function dropsStatements(route: SqlRoute): boolean {
  const command = route.classification.command;
  return command === 'deallocate' || command === 'discard';
}

/** A real CancelRequest with the backend's key; the connection is never lent again. */
function cancelOnBackend(lease: PgLease): void {
  const conn = lease.connection;
  conn.cancelled = true;
  void sendCancelRequest(conn.address, conn.processId, conn.secretKey);
}

/** Messages that start a unit of work: what a pause holds. */
function startsUnit(code: number): boolean {
  return code === FrontendCode.Query || code === FrontendCode.Parse || code === FrontendCode.Bind || code === FrontendCode.Execute;
}
