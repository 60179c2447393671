// Streaming decoder of everything a client sends: startup phase first, then typed messages.
import { PgFramer, type Frame, type FramerOptions } from '../framer';
import { decodeFrontendMessage } from './codec';
import type { AuthResponseKind, FrontendMessage } from './messages';

export type FrontendDecoderOptions = Pick<FramerOptions, 'maxMessageSize' | 'maxStartupSize'>;

/**
 * Server-side reader of a client connection. Starts in the startup phase, follows the
 * SSLRequest/StartupMessage sequence on its own, and decodes 'p' messages according to
 * `expectAuthResponse()`.
 */
export class FrontendDecoder {
  private readonly framer: PgFramer;
  private auth: AuthResponseKind = 'password';

  constructor(options: FrontendDecoderOptions = {}) {
    this.framer = new PgFramer({ ...options, phase: 'startup', peer: 'frontend' });
  }

  /** Call when sending AuthenticationCleartextPassword/MD5Password ('password'), SASL ('sasl-initial') or SASLContinue ('sasl'). */
  expectAuthResponse(kind: AuthResponseKind): void {
    this.auth = kind;
  }

  /** After a client was answered 'S' and its TLS session began: the next packet is a startup packet again. */
  expectStartup(): void {
    this.framer.expectStartup();
  }

  get buffered(): number {
    return this.framer.buffered;
  }

  /** Feeds a chunk; `onMessage` gets each decoded message with its raw frame (for forwarding as is). */
  push(chunk: Buffer, onMessage: (message: FrontendMessage, frame: Frame) => void): void {
    this.framer.push(chunk, (frame) => onMessage(decodeFrontendMessage(frame, this.auth), frame));
  }
}
