// Every key of the configuration schema is either honoured by the service code that owns it
// (KEY_REGISTRY names the file, which must mention the key) or refused by validate as not built.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatIssue, parseToml, validateDocument, type ConfigIssue } from '../src';
import { configSchema } from '../src/schema/root';
import { schemaKeyPaths } from '../src/schema/walk';
import { NOT_BUILT, NOT_BUILT_KEYS } from '../src/unbuilt';
import { KEY_REGISTRY } from './key-registry';

const ROOT = join(__dirname, '..', '..', '..');
const KEYS = schemaKeyPaths(configSchema);
const coveringEntry = (key: string) => NOT_BUILT_KEYS.find((e) => key === e.path || key.startsWith(`${e.path}.`) || key.startsWith(`${e.path}[`));
const concrete = (path: string) => path.replaceAll('[]', '[0]');

const BASE = 'mysql_backends = [{ name = "p", address = "h:3306", role = "primary" }]\n';

/** A document that sets the refused key (to something other than its default). */
const SAMPLES: Readonly<Record<string, string>> = {};

function issuesOf(toml: string): ConfigIssue[] {
  const parsed = parseToml(toml);
  if (!parsed.ok) throw new Error(parsed.issues.map(formatIssue).join('\n'));
  const result = validateDocument(parsed.document, {});
  return result.ok ? [] : result.issues;
}

/** Dotted words of a key path: `mysql_backends[].tls.ca_path` → ca_path. */
const leafName = (key: string) => key.replaceAll('[]', '').split('.').pop() as string;

describe('configuration keys: honoured or refused', () => {
  it('walks the whole schema, nested tables and array elements included', () => {
    expect(KEYS).toEqual(expect.arrayContaining(['proxy.admin.listen', 'mysql.sharding.rules[].map.ranges[].from', 'config_api.tokens[].role', 'redis_backends[].tls.server_name']));
    expect(KEYS.length).toBeGreaterThan(200);
  });

  it('lists every schema key in exactly one place: the registry of honoured keys, or the refused ones', () => {
    const neither = KEYS.filter((k) => KEY_REGISTRY[k] === undefined && coveringEntry(k) === undefined);
    const both = KEYS.filter((k) => KEY_REGISTRY[k] !== undefined && coveringEntry(k) !== undefined);
    const stale = Object.keys(KEY_REGISTRY).filter((k) => !KEYS.includes(k));
    expect({ neither, both, stale }).toEqual({ neither: [], both: [], stale: [] });
    for (const entry of NOT_BUILT_KEYS) expect(KEYS).toContain(entry.path);
  });

  it.each(Object.entries(KEY_REGISTRY))('%s is read in %s', (key, file) => {
    const path = join(ROOT, file);
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path, 'utf8')).toMatch(new RegExp(`\\b${leafName(key)}\\b`));
  });

  it('has a sample document for every refused key', () => {
    expect(KEYS.filter((k) => coveringEntry(k) !== undefined && SAMPLES[k] === undefined)).toEqual([]);
  });

  // one test over all (it.each refuses an empty table, and this build refuses no key today)
  it('validate refuses every not-built key as not implemented yet', () => {
    for (const key of KEYS.filter((k) => coveringEntry(k) !== undefined)) {
      const entry = coveringEntry(key) as (typeof NOT_BUILT_KEYS)[number];
      const issues = issuesOf(BASE + (SAMPLES[key] as string));
      const refusals = issues.filter((i) => i.message.startsWith(NOT_BUILT) && i.path.startsWith(concrete(entry.path)));
      const target = concrete(key);
      expect(refusals.some((i) => target.startsWith(i.path) || i.path.startsWith(target))).toBe(true);
      expect(refusals.every((i) => i.message.includes(entry.lands))).toBe(true);
    }
  });

  it('accepts the same base document without the refused keys, and an empty one', () => {
    expect(issuesOf(BASE)).toEqual([]);
    expect(issuesOf('')).toEqual([]);
  });

  it('does not refuse refused sections written with their defaults (a feature left off promises nothing)', () => {
    const defaults = '[mysql.sharding]\nenabled = false\nmulti_shard = "reject"\ndefault_shard = "default"\nrules = []\n[mysql.cache]\nenabled = false\nttl_seconds = 60\n[mysql.xa]\nenabled = false\n';
    expect(issuesOf(BASE + defaults)).toEqual([]);
  });

  it('accepts a hash rule on orders.customer_id (mysql-edge routes by it)', () => {
    const rule = '[[mysql.sharding.rules]]\ntable = "orders"\ncolumn = "customer_id"\nmap = { kind = "hash", shards = ["default"] }\n';
    expect(issuesOf(BASE + '[mysql.sharding]\nenabled = true\nmulti_shard = "all_shards"\n' + rule)).toEqual([]);
  });
});
