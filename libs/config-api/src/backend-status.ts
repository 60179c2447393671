// Drain and undrain as configuration changes: a copy of the document with one backend's `status`
// set, written by the caller as a new epoch (the edges then retire its connections on release).
import type { RawDocument } from '@dbproxy/config';
import { BACKEND_SECTIONS, type Protocol } from './backend-health';

export type BackendStatusChange =
  | { kind: 'changed'; document: RawDocument; protocol: Protocol; previous: string }
  | { kind: 'unchanged'; protocol: Protocol }
  | { kind: 'not_found' }
  | { kind: 'ambiguous'; protocols: Protocol[] }
  | { kind: 'refused'; protocol: Protocol; message: string };

type Entry = Record<string, unknown>;

function entriesOf(document: RawDocument, protocol: Protocol): Entry[] {
  const list = document[BACKEND_SECTIONS[protocol]];
  return Array.isArray(list) ? (list.filter((b) => b !== null && typeof b === 'object') as Entry[]) : [];
}

/**
 * Sets `status` on the backend `name` (of `protocol`, needed only when several protocols have a
 * backend of that name). Draining an `offline_hard` backend is refused: that would let it take
 * connections again.
 */
export function withBackendStatus(document: RawDocument, name: string, status: 'online' | 'offline_soft', protocol?: Protocol): BackendStatusChange {
  const candidates = (Object.keys(BACKEND_SECTIONS) as Protocol[]).filter((p) => (protocol === undefined || p === protocol) && entriesOf(document, p).some((b) => b['name'] === name));
  if (candidates.length === 0) return { kind: 'not_found' };
  if (candidates.length > 1) return { kind: 'ambiguous', protocols: candidates };
  const found = candidates[0] as Protocol;
  const previous = String(entriesOf(document, found).find((b) => b['name'] === name)?.['status'] ?? 'online');
  if (previous === status) return { kind: 'unchanged', protocol: found };
  if (status === 'offline_soft' && previous === 'offline_hard') {
    return { kind: 'refused', protocol: found, message: `backend "${name}" is offline_hard; undrain it first to let it take connections again` };
  }
  const copy = structuredClone(document);
  for (const b of entriesOf(copy, found)) if (b['name'] === name) b['status'] = status;
  return { kind: 'changed', document: copy, protocol: found, previous };
}
