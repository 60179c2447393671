// `dbproxy xa list|commit XID|rollback XID --config FILE`: the xa-coordinator's operator commands,
// sent to its admin HTTP (proxy.admin.xa_coordinator of FILE, or --admin HOST:PORT for an
// all-in-one process, whose admin HTTP is proxy.admin.listen).
import { loadConfigFile, formatIssue } from '@dbproxy/config';
import { errorMessage } from '@dbproxy/util';

interface InDoubtView {
  xid: string;
  bqual: string;
  backend: string;
  shard: string;
  ours: boolean;
  decision: string;
  running: boolean;
  age_seconds: number | null;
}

function adminBase(configPath: string, admin: string | undefined): string {
  if (admin) return `http://${admin}`;
  const loaded = loadConfigFile(configPath);
  if (!loaded.ok) throw new Error(`${configPath}: ${loaded.issues.map(formatIssue).join('; ')}`);
  const address = loaded.config.proxy.admin.xa_coordinator;
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${address.slice(at + 1)}`;
}

function listLines(body: { coordinator?: string; in_doubt?: InDoubtView[]; unreachable?: { backend: string; error: string }[] }): string[] {
  const rows = body.in_doubt ?? [];
  const lines = [`coordinator ${body.coordinator ?? '(XA disabled)'}: ${rows.length} in-doubt branch(es)`];
  for (const r of rows) {
    const owner = r.ours ? `ours, decision ${r.decision}${r.running ? ', running' : ''}` : 'another transaction manager';
    const age = r.age_seconds === null ? 'age unknown' : `${r.age_seconds.toFixed(1)} s old`;
    lines.push(`  ${r.xid}  bqual=${JSON.stringify(r.bqual)}  ${r.backend} (shard ${r.shard})  ${owner}  ${age}`);
  }
  for (const u of body.unreachable ?? []) lines.push(`  unreachable: ${u.backend}: ${u.error}`);
  return lines;
}

export async function xaCommand(
  command: { action: 'list' | 'commit' | 'rollback'; xid?: string; configPath: string; admin?: string },
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  let base: string;
  try {
    base = adminBase(command.configPath, command.admin);
  } catch (e) {
    err(errorMessage(e));
    return 2;
  }
  try {
    const url = command.action === 'list' ? `${base}/xa` : `${base}/xa/${encodeURIComponent(command.xid as string)}/${command.action}`;
    const res = await fetch(url, { method: command.action === 'list' ? 'GET' : 'POST' });
    const body = (await res.json()) as Record<string, unknown>;
    if (!res.ok) {
      err(`dbproxy xa ${command.action}: ${String(body['message'] ?? body['error'] ?? res.status)}`);
      return 1;
    }
    if (command.action === 'list') for (const line of listLines(body)) out(line);
    else {
      const branches = (body['branches'] as { backend: string; bqual: string; settled: boolean }[]) ?? [];
      for (const b of branches) out(`${command.action} ${command.xid} bqual=${JSON.stringify(b.bqual)} on ${b.backend}: ${b.settled ? 'done' : 'FAILED (retry)'}`);
      if (branches.some((b) => !b.settled)) return 1;
    }
    return 0;
  } catch (e) {
    err(`dbproxy xa ${command.action}: the xa-coordinator admin HTTP at ${base} did not answer (${errorMessage(e)})`);
    return 1;
  }
}
