// The corpus: each real statement gets its expected family, route, shard decision and keys, on miss and on hit.
import { CORPUS, corpusRouters, type CorpusCase } from './testing/corpus';
import type { SqlRoute } from './router';

const routers = corpusRouters();

function shardsOf(route: SqlRoute): unknown {
  const d = route.decision;
  switch (d.kind) {
    case 'unsharded':
      return 'unsharded';
    case 'all_shards':
      return 'all';
    case 'reject':
      return `reject:${d.error.code}`;
    default:
      return [...d.shards];
  }
}

function observed(route: SqlRoute, c: CorpusCase): Record<string, unknown> {
  const cl = route.classification;
  const out: Record<string, unknown> = { family: cl.family, route: cl.replicaSafe ? 'replica' : 'primary', shards: shardsOf(route) };
  if (c.keys !== undefined) out.keys = route.decision.kind === 'shards' ? route.decision.keys.map((k) => (typeof k === 'bigint' ? Number(k) : k)) : [];
  if (c.tx !== undefined) out.tx = cl.transaction;
  if (c.session !== undefined) out.session = cl.session.kind;
  if (c.tables !== undefined) out.tables = cl.tables.map((t) => (t.schema === undefined ? t.name : `${t.schema}.${t.name}`)).sort();
  if (c.reasons !== undefined) out.reasons = c.reasons.filter((r) => cl.unsafeReasons.some((u) => u.code === r));
  return out;
}

function expected(c: CorpusCase): Record<string, unknown> {
  const out: Record<string, unknown> = { family: c.family, route: c.route, shards: c.shards };
  if (c.keys !== undefined) out.keys = c.keys;
  if (c.tx !== undefined) out.tx = c.tx;
  if (c.session !== undefined) out.session = c.session;
  if (c.tables !== undefined) out.tables = [...c.tables].sort();
  if (c.reasons !== undefined) out.reasons = c.reasons;
  return out;
}

describe('statement corpus', () => {
  it('has at least 300 statements', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
  });

  it.each(CORPUS.map((c) => [`${c.dialect} ${c.source}: ${c.sql.slice(0, 90)}`, c] as const))('%s', (_name, c) => {
    const router = routers[c.dialect];
    const first = router.route(c.sql, c.params);
    expect(observed(first, c)).toEqual(expected(c));
    const again = router.route(c.sql, c.params);
    expect(again.cache).toBe('hit');
    expect(observed(again, c)).toEqual(expected(c));
  });
});
