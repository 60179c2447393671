// Reads a plain-TCP backend socket with `onread`: no Readable-stream machinery per chunk, and the
// read buffer is reused whenever the previous chunk was written to the client at once (DESIGN §5).
import type { Socket } from 'node:net';

const READ_BUFFER_BYTES = 64 * 1024;

export class BackendReader {
  /** Where each chunk goes; returning false stops reading until `resume()`. */
  sink: (chunk: Buffer) => boolean = () => true;
  private buffer: Buffer | undefined;

  constructor(private readonly client: Socket) {}

  /** The `onread` option for net.connect. */
  readonly onread = {
    buffer: (): Buffer => this.nextBuffer(),
    callback: (bytes: number, buffer: Uint8Array): boolean => this.sink(Buffer.from(buffer.buffer, buffer.byteOffset, bytes)),
  };

  /** Starts reading again after the sink returned false. */
  resume(backend: Socket): void {
    backend.read(0);
  }

  /** The last buffer again if nothing written from it is still queued for the client, else a new one. */
  private nextBuffer(): Buffer {
    if (this.buffer !== undefined && this.client.writableLength === 0) return this.buffer;
    this.buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
    return this.buffer;
  }
}
