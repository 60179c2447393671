// Reading expected shapes out of decoded replies (RESP2 and RESP3 forms alike) for the interpreters.
import { UnexpectedReplyShape } from './errors';
import type { RespValue } from './value';

/** Items of an array, set or push. */
export function itemsOf(v: RespValue, context: string): readonly RespValue[] {
  if (v.type === 'array' || v.type === 'set' || v.type === 'push') return v.items;
  throw UnexpectedReplyShape(context, `expected an array, got ${v.type}`);
}

/** Key/value fields of a RESP3 map or of a RESP2 flat array of alternating keys and values. */
export function fieldsOf(v: RespValue, context: string): Map<string, RespValue> {
  const fields = new Map<string, RespValue>();
  if (v.type === 'map') {
    for (const [key, val] of v.entries) fields.set(textOf(key, context), val);
    return fields;
  }
  const items = itemsOf(v, context);
  if (items.length % 2 !== 0) throw UnexpectedReplyShape(context, 'odd number of key/value items');
  for (let i = 0; i < items.length; i += 2) fields.set(textOf(items[i], context), items[i + 1]);
  return fields;
}

/** A bulk, simple or verbatim string as text. */
export function textOf(v: RespValue, context: string): string {
  if (v.type === 'bulk' || v.type === 'verbatim') return v.value.toString();
  if (v.type === 'simple') return v.value;
  throw UnexpectedReplyShape(context, `expected a string, got ${v.type}`);
}

/** An integer reply (or a string holding one, as some RESP2 replies do) as a number. */
export function integerOf(v: RespValue, context: string): number {
  if (v.type === 'integer') return Number(v.value);
  if (v.type === 'bulk' || v.type === 'simple') {
    const n = Number(textOf(v, context));
    if (Number.isInteger(n)) return n;
  }
  throw UnexpectedReplyShape(context, `expected an integer, got ${v.type}`);
}

/** A list of strings (array or set of bulk/simple strings). */
export function textsOf(v: RespValue, context: string): string[] {
  return itemsOf(v, context).map((item) => textOf(item, context));
}

/** An optional field as text. */
export function optionalText(fields: Map<string, RespValue>, key: string, context: string): string | undefined {
  const v = fields.get(key);
  return v === undefined || v.type === 'null' ? undefined : textOf(v, context);
}

/** A required field. */
export function field(fields: Map<string, RespValue>, key: string, context: string): RespValue {
  const v = fields.get(key);
  if (v === undefined) throw UnexpectedReplyShape(context, `missing field "${key}"`);
  return v;
}
