// Connection ids of edge sessions: 2^30 + slot × 2^20 + n, a range backend thread ids do not reach
// (they count up from 1 per server start), within 31 bits for clients that read the handshake's
// 4 bytes as a signed int. Each process claims its slot in a bus KV bucket (compare-and-set,
// refreshed; a slot not refreshed for STALE_MS is free again), so ids are unique across workers and
// instances sharing the bus, and the slot of an id names the process that owns the session.
import { Buffer } from 'node:buffer';
import { randomBytes, randomInt } from 'node:crypto';
import type { Bus, KvStore } from '@dbproxy/bus';
import type { Logger } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';

export const EDGE_ID_BASE = 0x40000000;
const SEQ_BITS = 20;
const SEQ_LIMIT = 1 << SEQ_BITS;
export const ID_SLOTS = 1 << 10;
const BUCKET = 'dbproxy_mysqledge_ids';
const REFRESH_MS = 10_000;
const STALE_MS = 45_000;

/** The slot (process) of an edge connection id; -1 when the id is not in the edges' range. */
export function slotOfId(id: number): number {
  if (id < EDGE_ID_BASE || id >= EDGE_ID_BASE * 2) return -1;
  return (id - EDGE_ID_BASE) >>> SEQ_BITS;
}

export class EdgeIds<T> {
  /** This process's slot; set by claim() (a random one when the bus has no KV). */
  slot = randomInt(ID_SLOTS);
  private seq = 0;
  private readonly owners = new Map<number, T>();
  private kv: KvStore | null = null;
  private revision = 0;
  private readonly token = randomBytes(8).toString('hex');
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly logger: Logger) {}

  /** Claims a free slot in the bus KV; without KV the random slot stays (ids may then collide across processes). */
  async claim(bus: Bus): Promise<void> {
    try {
      this.kv = await bus.kv(BUCKET);
      const start = randomInt(ID_SLOTS);
      for (let k = 0; k < ID_SLOTS; k++) if (await this.tryClaim((start + k) % ID_SLOTS)) return this.keepFresh();
      this.logger.error({ slots: ID_SLOTS }, 'every mysql-edge connection id slot is taken; using a random one');
    } catch (err) {
      this.kv = null;
      this.logger.warn({ err: errorMessage(err) }, 'cannot claim a mysql-edge connection id slot on the bus; using a random one');
    }
  }

  private async tryClaim(slot: number): Promise<boolean> {
    const kv = this.kv as KvStore;
    const entry = await kv.get(`slot.${slot}`);
    const free = entry === undefined || entry.value === undefined;
    if (!free && Date.now() - entry.created.getTime() < STALE_MS) return false;
    try {
      this.revision = await kv.put(`slot.${slot}`, Buffer.from(this.token), { expectedRevision: free ? 0 : entry.revision });
    } catch {
      return false; // another process took it first
    }
    this.slot = slot;
    return true;
  }

  private keepFresh(): void {
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    const kv = this.kv;
    if (kv === null) return;
    try {
      this.revision = await kv.put(`slot.${this.slot}`, Buffer.from(this.token), { expectedRevision: this.revision });
    } catch (err) {
      // only after the process stalled for STALE_MS: another process may now hand out the same ids
      this.logger.error({ slot: this.slot, err: errorMessage(err) }, 'lost the mysql-edge connection id slot to another process');
      this.stopRefresh();
    }
  }

  private stopRefresh(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** A new id for `owner`, unique among this process's live sessions. */
  allocate(owner: T): number {
    for (let tries = 0; tries < SEQ_LIMIT; tries++) {
      this.seq = (this.seq % (SEQ_LIMIT - 1)) + 1;
      const id = EDGE_ID_BASE + this.slot * SEQ_LIMIT + this.seq;
      if (this.owners.has(id)) continue;
      this.owners.set(id, owner);
      return id;
    }
    throw new Error(`more than ${SEQ_LIMIT - 1} sessions in one process`);
  }

  release(id: number): void {
    this.owners.delete(id);
  }

  owner(id: number): T | undefined {
    return this.owners.get(id);
  }

  /** Stops refreshing and frees the slot. */
  async close(): Promise<void> {
    this.stopRefresh();
    const kv = this.kv;
    this.kv = null;
    if (kv === null) return;
    await kv.delete(`slot.${this.slot}`).catch(() => undefined);
  }
}
