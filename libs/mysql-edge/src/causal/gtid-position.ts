// MariaDB GTID positions as causal reads compare them: one sequence number per replication domain
// ("domain-server-seq" items, comma separated, as last_gtid and gtid_slave_pos print them).

/** The highest GTID seen per domain: domain id → [server id, sequence number]. */
export type GtidPosition = Map<number, readonly [server: number, seq: number]>;

const GTID = /^(\d+)-(\d+)-(\d+)$/;

/** Parses "0-1-42" or "0-1-42,1-2-7"; items that are not GTIDs are ignored (an empty result: nothing to wait for). */
export function parseGtids(text: string): GtidPosition {
  const position: GtidPosition = new Map();
  for (const item of text.split(',')) {
    const m = GTID.exec(item.trim());
    if (m === null) continue;
    const domain = Number(m[1]);
    const seq = Number(m[3]);
    const known = position.get(domain);
    if (known === undefined || known[1] < seq) position.set(domain, [Number(m[2]), seq]);
  }
  return position;
}

/** Raises `into` to include `more` (per domain, the higher sequence number). */
export function advance(into: GtidPosition, more: GtidPosition): void {
  for (const [domain, gtid] of more) {
    const known = into.get(domain);
    if (known === undefined || known[1] < gtid[1]) into.set(domain, gtid);
  }
}

/** True when `position` has reached `target` in every domain of `target`. */
export function reaches(position: GtidPosition | undefined, target: GtidPosition): boolean {
  for (const [domain, gtid] of target) {
    const known = position?.get(domain);
    if (known === undefined || known[1] < gtid[1]) return false;
  }
  return true;
}

/** The position as MASTER_GTID_WAIT takes it ("0-1-42,1-2-7"). */
export function gtidText(position: GtidPosition): string {
  return [...position].map(([domain, [server, seq]]) => `${domain}-${server}-${seq}`).join(',');
}
