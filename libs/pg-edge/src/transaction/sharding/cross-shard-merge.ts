// Reads that cannot be answered by concatenating every shard's rows: ordering, limits, grouping,
// aggregates, DISTINCT and set operations would need a merge the edge does not do, so they are refused.
const CLAUSES: readonly [RegExp, string][] = [
  [/\border\s+by\b/, 'ORDER BY'],
  [/\blimit\b/, 'LIMIT'],
  [/\boffset\b/, 'OFFSET'],
  [/\bfetch\s+(first|next)\b/, 'FETCH FIRST'],
  [/\bgroup\s+by\b/, 'GROUP BY'],
  [/\bhaving\b/, 'HAVING'],
  [/\bdistinct\b/, 'DISTINCT'],
  [/\b(union|intersect|except)\b/, 'a set operation'],
  [/\bover\s*\(/, 'a window function'],
  [/\b(count|sum|min|max|avg|array_agg|string_agg|json_agg|jsonb_agg|json_object_agg|bool_and|bool_or|every|bit_and|bit_or|stddev\w*|var_\w+|variance|percentile_\w+|mode)\s*\(/, 'an aggregate'],
];

/** What in the statement's fingerprint needs a cross-shard merge, or undefined when concatenation is its answer. */
export function crossShardMergeProblem(fingerprint: string): string | undefined {
  const text = fingerprint.toLowerCase();
  for (const [pattern, what] of CLAUSES) if (pattern.test(text)) return what;
  return undefined;
}
