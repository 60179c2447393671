// The blue/green map (spec 001 "Blue/Green Mapping"): the blue writer matched to the target
// writer by the RDS green-hostname relationship (explicit mode: the configured green writer by
// exact hostname and the blue port), and in explicit mode green readers name-matched to blue readers.
import type { DeploymentSettings, ServerRef } from './deployment-settings';
import type { ProbeTarget } from './topology-poller';
import { isGreenOf } from './green-naming';

export interface BgPair {
  readonly kind: 'writer' | 'reader';
  readonly blue: ServerRef;
  readonly greenHost: string;
  /** Explicit mode: the configured green backend; automatic mode: null (it exists only at run time). */
  readonly green: ServerRef | null;
  greenIp: string | null;
  /** Resolved IP expiry (ms since epoch); unresolved pairs are retried. */
  greenIpExpiresAt: number | null;
  /** DNS pin and drain done for this pair (once per worker lifetime). */
  pinned: boolean;
}

export interface MapResult {
  readonly pairs: BgPair[];
  /** Why the writer is not mapped (null when it is). */
  readonly writerProblem: string | null;
}

const pair = (kind: BgPair['kind'], blue: ServerRef, greenHost: string, green: ServerRef | null): BgPair => ({ kind, blue, greenHost, green, greenIp: null, greenIpExpiresAt: null, pinned: false });

/** Builds the map from the settings and the target row's endpoint (undefined when the topology has none). */
export function buildMap(settings: DeploymentSettings, targetEndpoint: string | undefined): MapResult {
  const blue = settings.blueWriter;
  if (!blue) return { pairs: [], writerProblem: 'no eligible blue writer' };
  const pairs: BgPair[] = [];
  let writerProblem: string | null = null;
  const target = targetEndpoint?.toLowerCase();
  if (settings.mode === 'automatic') {
    if (target && isGreenOf(blue.host, target)) pairs.push(pair('writer', blue, target, null));
    else writerProblem = target ? `target ${target} is not the green name of ${blue.host}` : 'no target row';
  } else {
    const green = settings.greenWriter;
    if (!green) writerProblem = 'the configured green writer is not eligible (offline or missing)';
    else if (green.host.toLowerCase() !== target) writerProblem = `green writer ${green.host} is not the target ${target ?? '(none)'}`;
    else if (green.port !== blue.port) writerProblem = `green writer port ${green.port} differs from the blue port ${blue.port} (unsupported)`;
    else pairs.push(pair('writer', blue, green.host, green));
    for (const reader of settings.blueReaders) {
      const match = settings.greenReaders.find((g) => g.port === reader.port && isGreenOf(reader.host, g.host));
      if (match) pairs.push(pair('reader', reader, match.host, match));
    }
  }
  return { pairs, writerProblem };
}

/** Blue readers without a mapped green counterpart: shunned during post-processing. */
export function unmappedReaders(settings: DeploymentSettings, pairs: readonly BgPair[]): ServerRef[] {
  return settings.blueReaders.filter((r) => !pairs.some((p) => p.kind === 'reader' && p.blue.name === r.name));
}

/**
 * The direct green-writer probe: the resolved green IP, the matched blue port (the target row's port
 * is not used), TLS verified against the green hostname, and TLS settings and account from the
 * explicit green row, else (automatic mode) from the blue writer. Null until the IP is resolved.
 */
export function directProbeTarget(writer: BgPair): ProbeTarget | null {
  if (!writer.greenIp) return null;
  const from = writer.green ?? writer.blue;
  return { host: writer.greenIp, port: writer.blue.port, serverName: writer.greenHost, tls: from.tls, username: from.username, password: from.password };
}
