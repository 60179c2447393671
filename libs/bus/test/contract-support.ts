// Shared pieces of the bus contract suite: the per-test context and small helpers.
import { createError } from '@dbproxy/util';
import type { Bus, EdgeHeartbeat } from '../src/index';

/** Makes a connected bus; every bus made for one test shares one broker or server. */
export type MakeBus = (name: string) => Promise<Bus>;

export interface ContractContext {
  readonly makeBus: MakeBus;
  /** A bus closed after the test. */
  open(label: string): Promise<Bus>;
  /** Unique per test: subjects and buckets start with it, so tests never see each other. */
  readonly prefix: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
export const bytes = (s: string): Uint8Array => enc.encode(s);
export const text = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : dec.decode(b));
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const ContractFailure = createError<[string]>('DBP_ERR_TEST_BUS_CONTRACT_FAILURE', 'contract handler failed: %s');

/** Polls until `check` holds, failing after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export function heartbeat(overrides: Partial<EdgeHeartbeat> = {}): EdgeHeartbeat {
  return {
    instanceId: 'edge-1',
    protocol: 'mysql',
    epoch: 3,
    sessions: 12,
    version: '0.1.0',
    adminAddress: '127.0.0.1:9100',
    startedAt: '2024-01-01T00:00:00.000Z',
    sentAt: '2024-01-01T00:00:05.000Z',
    ...overrides,
  };
}
