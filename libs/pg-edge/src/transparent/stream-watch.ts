// What a transparent session knows of its relayed streams without parsing them: where the
// backend's messages end (headers only, never a body) and whether its last one was ReadyForQuery,
// so that an idle client can be told why it is closed and a shutdown can send a FATAL between two
// messages, and how long each exchange took (the client's first bytes after a ReadyForQuery up to
// the backend's next one, for the latency histograms). A TLS-passthrough session is encrypted end
// to end: only the time of the last byte is known.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import type { LatencySeries } from '@dbproxy/observability';
import { BackendCode as BackendCodeExport } from '@dbproxy/protocol-pg';

/** Read once: through the package's CommonJS `export *` every access would be a getter call (per relayed message here). */
const BackendCode = BackendCodeExport;

const HEADER_BYTES = 5;
const IDLE = 0x49; // 'I'

/** Message boundaries of a backend's byte stream, from each message's 5-byte header. */
export class MessageBoundaries {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerFill = 0;
  private type = 0;
  /** Body bytes of the current message still to come. */
  private remaining = 0;
  /** A length no backend sends: the stream is not followed any further. */
  private lost = false;
  /** Type of the last whole message, and the transaction status of the last ReadyForQuery. */
  lastType: number = BackendCode.ReadyForQuery;
  status = IDLE;

  feed(buf: Buffer, n: number): void {
    let pos = 0;
    while (pos < n && !this.lost) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, n - pos);
        pos += take;
        this.remaining -= take;
        if (this.remaining === 0) this.ended(buf[pos - 1] as number);
      } else if (this.headerFill === 0 && n - pos >= HEADER_BYTES) {
        // the length read by hand: readInt32BE validates its offset in a call of its own, per relayed message
        this.begin(buf[pos] as number, ((buf[pos + 1] as number) << 24) | ((buf[pos + 2] as number) << 16) | ((buf[pos + 3] as number) << 8) | (buf[pos + 4] as number));
        pos += HEADER_BYTES;
      } else {
        this.header[this.headerFill++] = buf[pos++] as number;
        if (this.headerFill === HEADER_BYTES) {
          this.headerFill = 0;
          this.begin(this.header[0] as number, this.header.readInt32BE(1));
        }
      }
    }
  }

  /** Between two messages: bytes written after this point start a message of their own. */
  get atBoundary(): boolean {
    return !this.lost && this.remaining === 0 && this.headerFill === 0;
  }

  /** The backend's last word was a whole ReadyForQuery: it waits for the client. */
  get awaitingClient(): boolean {
    return this.atBoundary && this.lastType === BackendCode.ReadyForQuery;
  }

  private begin(type: number, length: number): void {
    if (length < 4) {
      this.lost = true;
      return;
    }
    this.type = type;
    this.remaining = length - 4;
    if (this.remaining === 0) this.ended(0);
  }

  private ended(lastByte: number): void {
    this.lastType = this.type;
    if (this.type === BackendCode.ReadyForQuery) this.status = lastByte;
  }
}

/** Activity of one transparent session's two directions, for proxy.client_read_timeout_seconds. */
export class StreamWatch {
  /** Undefined while TLS is passed through (the bytes are encrypted). */
  readonly boundaries: MessageBoundaries | undefined;
  private lastByteAt = performance.now();
  /** The client sent bytes since the backend's last ReadyForQuery: a statement may be running. */
  private clientSpoke = false;
  /** When the client's first bytes since the backend's last ReadyForQuery arrived. */
  private spokeAt = 0;
  /** Bound once the login is done; undefined before (and under TLS passthrough). */
  private latency: LatencySeries | undefined;

  constructor(encrypted: boolean) {
    this.boundaries = encrypted ? undefined : new MessageBoundaries();
  }

  /**
   * The backend's ReadyForQuery that ends the login was relayed: the client's bytes before it were
   * the login's, and from now on each exchange is observed in `latency` (statement and backend:
   * a relay sends the client's bytes on as they arrive).
   */
  loggedIn(latency: LatencySeries): void {
    this.clientSpoke = false;
    this.latency = latency;
  }

  fromClient(): void {
    const now = performance.now();
    this.lastByteAt = now;
    if (this.clientSpoke) return;
    this.clientSpoke = true;
    this.spokeAt = now;
  }

  fromBackend(buf: Buffer, n: number): void {
    const now = performance.now();
    this.lastByteAt = now;
    const boundaries = this.boundaries;
    if (!boundaries) return;
    boundaries.feed(buf, n);
    if (!boundaries.awaitingClient || !this.clientSpoke) return;
    this.clientSpoke = false;
    const latency = this.latency;
    if (latency === undefined) return;
    const seconds = (now - this.spokeAt) / 1000;
    latency.statement.observe(seconds);
    latency.backend.observe(seconds);
  }

  /** How long the backend has waited for a silent client (ms); 0 while a statement may run. TLS passthrough: since the last byte either way. */
  idleFor(nowMs: number): number {
    const boundaries = this.boundaries;
    if (boundaries && (this.clientSpoke || !boundaries.awaitingClient)) return 0;
    return nowMs - this.lastByteAt;
  }

  /** The session's transaction is open (the last ReadyForQuery said T or E). */
  get inTransaction(): boolean {
    return this.boundaries !== undefined && this.boundaries.status !== IDLE;
  }
}
