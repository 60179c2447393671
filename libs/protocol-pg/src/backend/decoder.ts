// Streaming decoder of everything a server sends, for the client side of pooled connections.
import { PgFramer, type Frame, type FramerOptions } from '../framer';
import { decodeBackendMessage } from './codec';
import type { BackendMessage } from './messages';

export type BackendDecoderOptions = Pick<FramerOptions, 'maxMessageSize'>;

export class BackendDecoder {
  private readonly framer: PgFramer;

  constructor(options: BackendDecoderOptions = {}) {
    this.framer = new PgFramer({ ...options, phase: 'typed', peer: 'backend' });
  }

  /** Call after sending SSLRequest/GSSENCRequest: the next byte is the server's one-byte answer. */
  expectEncryptionResponse(): void {
    this.framer.expectEncryptionResponse();
  }

  get buffered(): number {
    return this.framer.buffered;
  }

  /** Feeds a chunk; `onMessage` gets each decoded message with its raw frame (for forwarding as is). */
  push(chunk: Buffer, onMessage: (message: BackendMessage, frame: Frame) => void): void {
    this.framer.push(chunk, (frame) => onMessage(decodeBackendMessage(frame), frame));
  }
}
