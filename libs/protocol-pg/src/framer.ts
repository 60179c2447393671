// Streaming framer: cuts a byte stream into startup packets, typed messages or the one-byte
// encryption answer, without decoding them; frames that sit in one chunk are zero-copy slices.
import { Buffer } from 'node:buffer';
import { EncryptionResponseCode, StartupCode } from './codes';
import { InvalidLength, MalformedMessage, MessageTooLarge, UnexpectedData } from './errors';

/** What the framer expects next on the stream. */
export type FramePhase = 'startup' | 'typed' | 'encryption-response';

export interface Frame {
  /** 'startup': untyped length-prefixed packet; 'typed': type byte + int32 length; 'encryption-response': one byte. */
  readonly kind: FramePhase;
  /** The type byte, the startup packet's int32 request code / protocol version, or the answer byte. */
  readonly code: number;
  /** The whole frame exactly as on the wire: forward this to pass the message through untouched. */
  readonly bytes: Buffer;
  /** The body after the header (after the int32 code for startup packets). */
  readonly payload: Buffer;
  /**
   * Where `bytes` lie, for a typed frame cut from a read: `source[start, end)`. Frames cut from one
   * read share `source`, so a writer can take them as ranges of it (no view per frame).
   */
  readonly source?: Buffer;
  readonly start?: number;
  readonly end?: number;
}

export interface FramerOptions {
  /** Largest typed frame accepted, header included; larger declared lengths fail before buffering. Default 64 MiB. */
  readonly maxMessageSize?: number;
  /** Largest startup packet accepted; PostgreSQL's own limit is 10000 bytes. */
  readonly maxStartupSize?: number;
  /** Where the stream starts: 'startup' for bytes from a client, 'typed' for bytes from a server. */
  readonly phase?: FramePhase;
  /** Names the peer in error messages ('frontend' or 'backend'). */
  readonly peer?: string;
}

/**
 * One typed message as a range of a chunk: `buf[start, end)` is the whole frame as on the wire
 * (type byte, length, body). Valid as long as the chunk is; no object is made per message.
 */
export type MessageListener = (code: number, buf: Buffer, start: number, end: number) => void;

/** A typed frame over `buf[start, end)` (for a consumer that wants a Frame after all). */
export function typedFrameAt(buf: Buffer, start: number, end: number): Frame {
  return new CutFrame('typed', buf[start] as number, buf, start, end, 5);
}

export const DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024;
export const DEFAULT_MAX_STARTUP_SIZE = 10000;

/** A frame's header size in each phase (compared, not looked up: a lookup by the varying phase was a megamorphic keyed load per read). */
const headerSizeOf = (phase: FramePhase): number => (phase === 'typed' ? 5 : phase === 'startup' ? 8 : 1);

/** Requests after which the peer must wait for our answer before sending anything more. */
const ANSWER_AWAITING: ReadonlyMap<number, string> = new Map([
  [StartupCode.SSLRequest, 'SSLRequest'],
  [StartupCode.GSSENCRequest, 'GSSENCRequest'],
  [StartupCode.CancelRequest, 'CancelRequest'],
]);

/** A frame as cut: `payload` is sliced on first use (a proxy relays most frames without reading it). */
class CutFrame implements Frame {
  private whole: Buffer | undefined;
  private body: Buffer | undefined;

  constructor(
    readonly kind: FramePhase,
    readonly code: number,
    readonly source: Buffer,
    readonly start: number,
    readonly end: number,
    private readonly headerSize: number,
  ) {}

  /** The frame's own view, made on first use (the read itself when the frame is all of it). */
  get bytes(): Buffer {
    return (this.whole ??= this.start === 0 && this.end === this.source.length ? this.source : this.source.subarray(this.start, this.end));
  }

  get payload(): Buffer {
    return (this.body ??= this.source.subarray(this.start + this.headerSize, this.end));
  }
}

export class PgFramer {
  private phaseNow: FramePhase;
  private readonly maxMessageSize: number;
  private readonly maxStartupSize: number;
  private readonly peer: string;
  private readonly head = Buffer.alloc(8);
  private headLength = 0;
  private body: Buffer | null = null;
  private bodyLength = 0;
  private failure: Error | null = null;
  /** Set after a frame the peer must wait on; any byte after it in the same push is a violation. */
  private mustBeSilentAfter: string | null = null;
  private stopped = false;
  private remainder: Buffer = Buffer.alloc(0);

  constructor(options: FramerOptions = {}) {
    this.phaseNow = options.phase ?? 'typed';
    this.maxMessageSize = options.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE;
    this.maxStartupSize = options.maxStartupSize ?? DEFAULT_MAX_STARTUP_SIZE;
    this.peer = options.peer ?? 'peer';
  }

  get phase(): FramePhase {
    return this.phaseNow;
  }

  /** Bytes held back waiting for the rest of a frame. */
  get buffered(): number {
    return this.body ? this.bodyLength : this.headLength;
  }

  /** The next frame is an untyped startup packet (a new client, or one that was refused TLS). */
  expectStartup(): void {
    this.switchTo('startup');
  }

  /** The next byte is a server's answer to our SSLRequest/GSSENCRequest. */
  expectEncryptionResponse(): void {
    this.switchTo('encryption-response');
  }

  /** The stream carries typed messages from now on. */
  expectTyped(): void {
    this.switchTo('typed');
  }

  /**
   * Stops framing after the frame being delivered (call it from `onFrame`): the rest of the chunk
   * is kept, unparsed, for `takeRemainder()`. Transparent mode uses this to stop after the
   * StartupMessage and pump everything behind it as raw bytes.
   */
  stop(): void {
    this.stopped = true;
  }

  /** The bytes that followed the frame at which `stop()` was called (a slice of that chunk). */
  takeRemainder(): Buffer {
    const rest = this.remainder;
    this.remainder = Buffer.alloc(0);
    return rest;
  }

  private switchTo(phase: FramePhase): void {
    if (this.buffered > 0) throw UnexpectedData(this.buffered, `the ${this.phaseNow} phase`);
    this.phaseNow = phase;
  }

  /**
   * Feeds one chunk; calls `onFrame` for each complete frame in order. Throws a typed
   * DBP_ERR_PG_* error on a malformed stream, and keeps throwing it on later pushes.
   */
  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    if (this.failure) throw this.failure;
    if (this.stopped) throw UnexpectedData(chunk.length, 'the framer was stopped');
    try {
      this.mustBeSilentAfter = null;
      let offset = 0;
      while (offset < chunk.length) {
        if (this.stopped) {
          this.remainder = chunk.subarray(offset);
          return;
        }
        if (this.mustBeSilentAfter) throw UnexpectedData(chunk.length - offset, this.mustBeSilentAfter);
        offset = this.buffered > 0 ? this.fill(chunk, offset, onFrame) : this.cut(chunk, offset, onFrame);
      }
    } catch (err) {
      this.failure = err instanceof Error ? err : new Error(String(err));
      throw err;
    }
  }

  /**
   * `push` for the typed phase with each message handed over as a range of the chunk (or of the
   * framer's own buffer for a message that spanned chunks): no Frame or slice per message, the
   * per-message cost of relaying a backend's answers. Other phases go through `push`.
   */
  pushMessages(chunk: Buffer, onMessage: MessageListener): void {
    if (this.phaseNow !== 'typed' || this.stopped || this.failure) return this.push(chunk, (frame) => onMessage(frame.code, frame.bytes, 0, frame.bytes.length));
    try {
      this.mustBeSilentAfter = null;
      const n = chunk.length;
      let offset = 0;
      while (offset < n) {
        if (this.stopped) {
          this.remainder = chunk.subarray(offset);
          return;
        }
        if (this.mustBeSilentAfter || this.phaseNow !== 'typed') return this.push(chunk.subarray(offset), (frame) => onMessage(frame.code, frame.bytes, 0, frame.bytes.length));
        if (this.buffered > 0) {
          offset = this.fill(chunk, offset, (frame) => onMessage(frame.code, frame.bytes, 0, frame.bytes.length));
          continue;
        }
        if (n - offset < 5) {
          chunk.copy(this.head, 0, offset);
          this.headLength = n - offset;
          return;
        }
        const total = this.frameLength(chunk, offset);
        if (n - offset < total) {
          this.body = Buffer.allocUnsafe(total);
          chunk.copy(this.body, 0, offset);
          this.bodyLength = n - offset;
          return;
        }
        onMessage(chunk[offset] as number, chunk, offset, offset + total);
        offset += total;
      }
    } catch (err) {
      this.failure = err instanceof Error ? err : new Error(String(err));
      throw err;
    }
  }

  /** Frames straight out of `chunk` from `offset`; returns the new offset. */
  private cut(chunk: Buffer, offset: number, onFrame: (frame: Frame) => void): number {
    const available = chunk.length - offset;
    if (available < headerSizeOf(this.phaseNow)) {
      // a startup packet's length is judged as soon as it is known, not when the header completes
      if (this.phaseNow === 'startup' && available >= 4) this.startupLength(chunk.readInt32BE(offset));
      chunk.copy(this.head, 0, offset);
      this.headLength = available;
      return chunk.length;
    }
    const total = this.frameLength(chunk, offset);
    if (available < total) {
      this.body = Buffer.allocUnsafe(total);
      chunk.copy(this.body, 0, offset);
      this.bodyLength = available;
      return chunk.length;
    }
    if (this.phaseNow === 'typed') onFrame(new CutFrame('typed', chunk[offset] as number, chunk, offset, offset + total, 5));
    else this.emit(chunk.subarray(offset, offset + total), onFrame);
    return offset + total;
  }

  /** Continues a frame that began in an earlier chunk; returns the new offset. */
  private fill(chunk: Buffer, offset: number, onFrame: (frame: Frame) => void): number {
    if (!this.body) {
      const headerSize = headerSizeOf(this.phaseNow);
      const n = Math.min(headerSize - this.headLength, chunk.length - offset);
      chunk.copy(this.head, this.headLength, offset, offset + n);
      this.headLength += n;
      offset += n;
      if (this.headLength < headerSize) {
        if (this.phaseNow === 'startup' && this.headLength >= 4) this.startupLength(this.head.readInt32BE(0));
        return offset;
      }
      this.body = Buffer.allocUnsafe(this.frameLength(this.head, 0));
      this.head.copy(this.body, 0, 0, headerSize);
      this.bodyLength = headerSize;
      this.headLength = 0;
    }
    const n = Math.min(this.body.length - this.bodyLength, chunk.length - offset);
    chunk.copy(this.body, this.bodyLength, offset, offset + n);
    this.bodyLength += n;
    offset += n;
    if (this.bodyLength === this.body.length) {
      const frame = this.body;
      this.body = null;
      this.bodyLength = 0;
      this.emit(frame, onFrame);
    }
    return offset;
  }

  /** Total frame size from a complete header at `at`; validates it against the limits. */
  private frameLength(buf: Buffer, at: number): number {
    if (this.phaseNow === 'encryption-response') return 1;
    if (this.phaseNow === 'typed') {
      // read by hand: Buffer's readInt32BE validates its offset in a call of its own, and this runs for every message relayed
      const length = ((buf[at + 1] as number) << 24) | ((buf[at + 2] as number) << 16) | ((buf[at + 3] as number) << 8) | (buf[at + 4] as number);
      // The name is built only for the error.
      if (length < 4) throw InvalidLength(`${this.peer} '${printable(buf[at])}'`, length);
      if (length + 1 > this.maxMessageSize) throw MessageTooLarge(`${this.peer} '${printable(buf[at])}'`, length + 1, this.maxMessageSize);
      return length + 1;
    }
    const length = this.startupLength(buf.readInt32BE(at));
    const code = buf.readInt32BE(at + 4);
    const fixed = code === StartupCode.CancelRequest ? 16 : ANSWER_AWAITING.has(code) ? 8 : 0;
    if (fixed !== 0 && length !== fixed) throw InvalidLength(ANSWER_AWAITING.get(code) ?? 'startup packet', length);
    return length;
  }

  /** A startup packet's declared length, validated (PostgreSQL judges it before reading on). */
  private startupLength(length: number): number {
    if (length < 8) throw InvalidLength('startup packet', length);
    if (length > this.maxStartupSize) throw MessageTooLarge('startup packet', length, this.maxStartupSize);
    return length;
  }

  private emit(bytes: Buffer, onFrame: (frame: Frame) => void): void {
    const kind = this.phaseNow;
    if (kind === 'typed') {
      onFrame(new CutFrame(kind, bytes[0] as number, bytes, 0, bytes.length, 5));
    } else if (kind === 'startup') {
      const code = bytes.readInt32BE(4);
      const awaited = ANSWER_AWAITING.get(code);
      if (awaited) this.mustBeSilentAfter = awaited;
      else this.phaseNow = 'typed';
      onFrame({ kind, code, bytes, payload: bytes.subarray(8) });
    } else {
      this.emitEncryptionResponse(bytes, onFrame);
    }
  }

  private emitEncryptionResponse(bytes: Buffer, onFrame: (frame: Frame) => void): void {
    const code = bytes[0];
    const accepted = code === EncryptionResponseCode.Accept || code === EncryptionResponseCode.AcceptGss;
    if (!accepted && code !== EncryptionResponseCode.Refuse) {
      throw MalformedMessage('encryption response', `unexpected byte 0x${code.toString(16)}`);
    }
    this.phaseNow = 'typed';
    // After 'S'/'G' the stream switches to TLS/GSS: plaintext bytes behind it would be injected (CVE-2021-23222).
    if (accepted) this.mustBeSilentAfter = `the encryption answer '${printable(code)}'`;
    onFrame({ kind: 'encryption-response', code, bytes, payload: bytes.subarray(1) });
  }
}

function printable(byte: number): string {
  return byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `0x${byte.toString(16).padStart(2, '0')}`;
}
