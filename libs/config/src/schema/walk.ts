// Walks the zod configuration schema: every key path (nested tables, array elements `[]`), and
// the schema and default value at one path.
import { z } from 'zod';

/** Strips wrappers (default, optional, nullable, refinements) down to the schema that holds keys. */
function unwrap(schema: z.ZodTypeAny): z.ZodTypeAny {
  if (schema instanceof z.ZodDefault) return unwrap(schema._def.innerType as z.ZodTypeAny);
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return unwrap(schema.unwrap() as z.ZodTypeAny);
  if (schema instanceof z.ZodEffects) return unwrap(schema.innerType() as z.ZodTypeAny);
  return schema;
}

/** Tables a node's keys live in: an object, each member of a union, or an array's element. */
function tablesOf(schema: z.ZodTypeAny, path: string): { path: string; table: z.AnyZodObject }[] {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodObject) return [{ path, table: inner }];
  if (inner instanceof z.ZodArray) return tablesOf(inner.element as z.ZodTypeAny, `${path}[]`);
  if (inner instanceof z.ZodDiscriminatedUnion || inner instanceof z.ZodUnion) {
    const options = inner.options as z.ZodTypeAny[] | Map<unknown, z.ZodTypeAny>;
    return [...options.values()].flatMap((o) => tablesOf(o, path));
  }
  return [];
}

/** Every key path, e.g. `mysql.sharding.rules[].map.shards`, each once, in schema order. */
export function schemaKeyPaths(schema: z.ZodTypeAny, prefix = ''): string[] {
  const out = new Set<string>();
  for (const { path, table } of tablesOf(schema, prefix)) {
    for (const [key, child] of Object.entries(table.shape as Record<string, z.ZodTypeAny>)) {
      const keyPath = path === '' ? key : `${path}.${key}`;
      out.add(keyPath);
      for (const nested of schemaKeyPaths(child, keyPath)) out.add(nested);
    }
  }
  return [...out];
}

/** The schema of one key path (`[]` steps into array elements), or undefined when there is none. */
export function schemaAt(schema: z.ZodTypeAny, path: string): z.ZodTypeAny | undefined {
  let node: z.ZodTypeAny | undefined = schema;
  for (const step of path.match(/\[\]|[^.[\]]+/g) ?? []) {
    const inner: z.ZodTypeAny | undefined = node ? unwrap(node) : undefined;
    if (step === '[]') node = inner instanceof z.ZodArray ? (inner.element as z.ZodTypeAny) : undefined;
    else node = inner instanceof z.ZodObject ? (inner.shape as Record<string, z.ZodTypeAny>)[step] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** What a key holds when the document leaves it out (undefined for a required or optional key). */
export function defaultAt(schema: z.ZodTypeAny, path: string): unknown {
  const node = schemaAt(schema, path);
  const parsed = node?.safeParse(undefined);
  return parsed?.success ? parsed.data : undefined;
}
