// Re-encodes an inline command as a multibulk frame, so a server never reads the client's inline bytes.
import type { CommandBatch } from './command-batch';
import { CommandScanner } from './command-scanner';
import { encodeCommand } from './encoder';

/**
 * A server splits an inline line by its own rules, which may differ from the scanner's (and a
 * NUL makes Redis wait for more input). A proxy sharing one server connection among clients
 * sends the arguments the scanner found, framed as `*N` `$len`, instead of the line.
 */
export class InlineReframer {
  private readonly scanner = new CommandScanner();

  /** Command `i` of `batch` (inline) as a batch holding one multibulk command over a new buffer (valid until the next call). */
  reframe(batch: CommandBatch, i: number): CommandBatch {
    const frame = encodeCommand(batch.args(i));
    this.scanner.reset();
    return this.scanner.scan(frame, 0, frame.length);
  }
}
