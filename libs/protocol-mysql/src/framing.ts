// Packet framing: 3-byte length + sequence id headers, payloads of 16 MiB and more reassembled,
// a bounded maximum size, and packets handed out as slices of the fed chunk where possible.
import { Buffer } from 'node:buffer';
import { MAX_FRAME_PAYLOAD } from './cursor';
import { InvalidState, PacketTooLarge, SequenceMismatch } from './errors';

/** Default bound on one logical packet (payload bytes, all frames together). */
export const DEFAULT_MAX_PACKET_SIZE = 64 * 1024 * 1024;

/** One logical packet: a payload with its header(s). */
export interface MysqlPacket {
  /** Sequence id of the first frame. */
  readonly sequenceId: number;
  /** Sequence id of the last frame; differs from `sequenceId` only for payloads of 16 MiB - 1 and more. */
  readonly lastSequenceId: number;
  /** The payload, without headers. */
  readonly payload: Buffer;
  /** The packet as it was on the wire, headers included; a slice of the fed chunk when it was wholly in one. */
  readonly wire: Buffer;
  /** `wire.length`, without making the view. */
  readonly wireLength: number;
  /** `payload.length`, without making the view. */
  readonly payloadLength: number;
  /** The payload's first byte (the packet's header: OK, ERR, EOF...), -1 for an empty payload; without making the view. */
  readonly header: number;
}

/**
 * A packet that lies in one buffer: its `wire` and `payload` views are made when first read. A
 * Buffer view (`subarray`) is a JavaScript call that reads the parent's `.buffer` and `.byteOffset`
 * and constructs a FastBuffer, several hundred instructions, and most packets are forwarded by their
 * range in the chunk or classified by their first byte without either view.
 */
class FramedPacket implements MysqlPacket {
  readonly lastSequenceId: number;
  readonly wireLength: number;
  readonly payloadLength: number;
  readonly header: number;
  private wireView: Buffer | undefined = undefined;
  private payloadView: Buffer | undefined = undefined;

  constructor(
    private readonly source: Buffer,
    private readonly start: number,
    private readonly end: number,
    readonly sequenceId: number,
  ) {
    this.lastSequenceId = sequenceId;
    this.wireLength = end - start;
    this.payloadLength = end - start - 4;
    this.header = end - start > 4 ? (source[start + 4] as number) : -1;
  }

  get wire(): Buffer {
    return (this.wireView ??= this.start === 0 && this.end === this.source.length ? this.source : this.source.subarray(this.start, this.end));
  }

  get payload(): Buffer {
    return (this.payloadView ??= this.source.subarray(this.start + 4, this.end));
  }
}

/** A packet with its own copies of its bytes (one kept after the chunk it came in may change). */
export function copyPacket(p: MysqlPacket): MysqlPacket {
  const { sequenceId, lastSequenceId, wireLength, payloadLength, header } = p;
  return { sequenceId, lastSequenceId, wireLength, payloadLength, header, payload: Buffer.from(p.payload), wire: Buffer.from(p.wire) };
}

export interface PacketFramerOptions {
  /** Largest payload accepted; bigger packets raise DBP_ERR_MYSQL_PACKET_TOO_LARGE before any buffering. */
  readonly maxPacketSize?: number;
}

/** Return `false` from the handler to stop framing after this packet (e.g. before a TLS upgrade). */
export type PacketHandler = (packet: MysqlPacket) => boolean | void;

/** Streaming framer: feed it socket chunks of any size, it calls back with complete packets. */
export class PacketFramer {
  readonly maxPacketSize: number;
  private readonly header = Buffer.alloc(4);
  private headerFill = 0;
  private frame: Buffer | null = null; // a frame split across chunks, header included
  private frameFill = 0;
  private parts: Buffer[] = []; // frames of a payload of 16 MiB - 1 or more, in arrival order
  private partsPayload = 0;
  private failure: Error | null = null;
  /**
   * Where the packet being handed out starts in the chunk being fed, when its wire bytes are that
   * chunk's [wireOffset, wireOffset + wire.length); -1 when they were assembled from several chunks
   * or frames. Lets a forwarder extend runs of the chunk without comparing buffers per packet.
   */
  wireOffset = -1;

  constructor(options: PacketFramerOptions = {}) {
    this.maxPacketSize = options.maxPacketSize ?? DEFAULT_MAX_PACKET_SIZE;
    if (!Number.isSafeInteger(this.maxPacketSize) || this.maxPacketSize < 0) {
      throw InvalidState(`maxPacketSize must be a non-negative integer, got ${this.maxPacketSize}`);
    }
  }

  /** Bytes held back waiting for the rest of a packet. */
  get bufferedBytes(): number {
    return this.headerFill + this.frameFill + this.partsPayload + this.parts.length * 4;
  }

  /**
   * Frames `chunk`. Returns the unconsumed rest of the chunk when the handler stopped early
   * (returned `false`), otherwise `undefined`. A framing error is thrown and poisons the framer.
   */
  feed(chunk: Buffer, onPacket: PacketHandler): Buffer | undefined {
    if (this.failure) throw this.failure;
    try {
      return this.consume(chunk, onPacket);
    } catch (err) {
      this.failure = err instanceof Error ? err : InvalidState(String(err));
      throw err;
    }
  }

  private consume(chunk: Buffer, onPacket: PacketHandler): Buffer | undefined {
    let off = 0;
    for (;;) {
      if (this.frame) {
        off = this.fillFrame(chunk, off);
        if (this.frameFill < this.frame.length) return undefined;
        this.wireOffset = -1;
        const frame = this.takeFrame();
        if (this.onFrame(frame, 0, frame.length, onPacket) === false) return chunk.subarray(off);
        continue;
      }
      if (off >= chunk.length) return undefined;
      if (this.headerFill > 0 || chunk.length - off < 4) {
        off = this.fillHeader(chunk, off);
        continue;
      }
      // the three length bytes read in place (readUIntLE dispatches and checks per call; 4 bytes are there)
      const length = (chunk[off] as number) | ((chunk[off + 1] as number) << 8) | ((chunk[off + 2] as number) << 16);
      this.checkSize(length);
      if (chunk.length - off >= 4 + length) {
        const start = off;
        this.wireOffset = start;
        off += 4 + length;
        if (this.onFrame(chunk, start, off, onPacket) === false) return chunk.subarray(off);
      } else {
        this.startFrame(length).set(chunk.subarray(off, off + 4), 0);
        off += 4;
      }
    }
  }

  // Collects a header split across chunks; once whole, opens the frame buffer.
  private fillHeader(chunk: Buffer, off: number): number {
    const n = Math.min(4 - this.headerFill, chunk.length - off);
    chunk.copy(this.header, this.headerFill, off, off + n);
    this.headerFill += n;
    if (this.headerFill === 4) {
      const length = this.header.readUIntLE(0, 3);
      this.checkSize(length);
      this.startFrame(length).set(this.header, 0);
      this.headerFill = 0;
    }
    return off + n;
  }

  private startFrame(length: number): Buffer {
    this.frame = Buffer.allocUnsafe(4 + length);
    this.frameFill = 4;
    return this.frame;
  }

  private fillFrame(chunk: Buffer, off: number): number {
    const frame = this.frame as Buffer;
    const n = Math.min(frame.length - this.frameFill, chunk.length - off);
    chunk.copy(frame, this.frameFill, off, off + n);
    this.frameFill += n;
    return off + n;
  }

  private takeFrame(): Buffer {
    const frame = this.frame as Buffer;
    this.frame = null;
    this.frameFill = 0;
    return frame;
  }

  private checkSize(frameLength: number): void {
    const total = this.partsPayload + frameLength;
    if (total > this.maxPacketSize) throw PacketTooLarge(total, this.maxPacketSize);
  }

  /** The frame `source[start, end)`, header included. */
  private onFrame(source: Buffer, start: number, end: number, onPacket: PacketHandler): boolean | void {
    const length = end - start - 4;
    const sequenceId = source[start + 3] as number;
    if (this.parts.length === 0) {
      if (length < MAX_FRAME_PAYLOAD) return onPacket(new FramedPacket(source, start, end, sequenceId));
    } else {
      const expected = (this.parts[this.parts.length - 1][3] + 1) & 0xff;
      if (sequenceId !== expected) throw SequenceMismatch(sequenceId, expected);
    }
    const frame = start === 0 && end === source.length ? source : source.subarray(start, end);
    this.parts.push(frame);
    this.partsPayload += length;
    if (length === MAX_FRAME_PAYLOAD) return undefined;
    this.wireOffset = -1;
    return onPacket(this.assemble());
  }

  private assemble(): MysqlPacket {
    const parts = this.parts;
    const payload = Buffer.allocUnsafe(this.partsPayload);
    let at = 0;
    for (const part of parts) at += part.copy(payload, at, 4);
    this.parts = [];
    this.partsPayload = 0;
    const wire = Buffer.concat(parts);
    return {
      sequenceId: parts[0][3],
      lastSequenceId: parts[parts.length - 1][3],
      payload,
      wire,
      wireLength: wire.length,
      payloadLength: payload.length,
      header: payload.length > 0 ? (payload[0] as number) : -1,
    };
  }
}

/** Frames one payload (splitting at 16 MiB - 1) into a new buffer; returns it. For tests and one-offs. */
export function framePayload(payload: Uint8Array, sequenceId: number): Buffer {
  const frames = Math.floor(payload.length / MAX_FRAME_PAYLOAD) + 1;
  const out = Buffer.allocUnsafe(payload.length + frames * 4);
  for (let i = 0; i < frames; i++) {
    const from = i * MAX_FRAME_PAYLOAD;
    const size = Math.min(MAX_FRAME_PAYLOAD, payload.length - from);
    const to = from + i * 4;
    out.writeUIntLE(size, to, 3);
    out[to + 3] = (sequenceId + i) & 0xff;
    out.set(payload.subarray(from, from + size), to + 4);
  }
  return out;
}

/**
 * Collects wire slices for one write, merging neighbours that are adjacent in the same
 * backend chunk, so forwarding a run of rows costs one Buffer instead of one per row.
 */
export class WireBatch {
  private slices: Buffer[] = [];
  private total = 0;

  get byteLength(): number {
    return this.total;
  }

  push(slice: Buffer): void {
    this.total += slice.length;
    const last = this.slices[this.slices.length - 1];
    if (last && last.buffer === slice.buffer && last.byteOffset + last.length === slice.byteOffset) {
      this.slices[this.slices.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + slice.length);
      return;
    }
    this.slices.push(slice);
  }

  /** The collected slices (to hand to `socket.write` inside cork/uncork); the batch is emptied. */
  take(): Buffer[] {
    const out = this.slices;
    this.slices = [];
    this.total = 0;
    return out;
  }
}
