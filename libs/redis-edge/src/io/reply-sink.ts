// Who receives a backend reply: the contract between backend connections and their users.
import type { Redirect } from '@dbproxy/resp';
import type { BackendLink } from './backend-link';

/** Bits of a queued command's `flags` in a backend connection's FIFO. */
export const SendFlag = {
  /** The reply is for the proxy (ASKING's +OK, a handshake step): not delivered. */
  Skip: 1,
  /** Error replies are checked for MOVED / ASK / TRYAGAIN / CLUSTERDOWN first. */
  Redirectable: 2,
  /** Sent after ASKING (an ASK retry). */
  Asked: 4,
} as const;

/** The command a redirect refers to, so it can be sent again. */
export interface SentFrame {
  readonly buf: Buffer;
  readonly start: number;
  readonly end: number;
  /** Redirects and retries this command has had so far. */
  readonly attempt: number;
}

export interface ReplySink {
  /** The reply to (seq, part) is `buf[start, end)`, valid for as long as the caller keeps `buf`. */
  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void;
  /** No reply will come for (seq, part). */
  fail(seq: number, part: number, err: Error): void;
  /**
   * A redirect (MOVED/ASK) or retry error (TRYAGAIN/CLUSTERDOWN) answered (seq, part), which was
   * sent with SendFlag.Redirectable through `via`. Returns false to deliver the error reply as it is.
   */
  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean;
}
