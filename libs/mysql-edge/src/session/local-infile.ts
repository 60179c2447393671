// Relaying one LOAD DATA LOCAL INFILE upload: once the server's file request has gone to the
// client, the client's file packets go to the backend connection as they came (each already
// bounded by max_packet_bytes by the session's framer) until the empty packet that ends the file;
// the client's socket pauses while the backend's is full.
import type { Socket } from 'node:net';
import type { MysqlPacket } from '@dbproxy/protocol-mysql';
import type { BackendConnection } from '../backend/backend-connection';

export class LocalInfileUpload {
  /** Sequence id of the next packet to the client (the server's answer, or an edge ERR). */
  nextSeq: number;
  /** The empty packet came: the file is complete. */
  ended = false;
  private paused = false;

  constructor(
    private readonly conn: BackendConnection,
    private readonly client: Socket,
    requestSeq: number,
  ) {
    this.nextSeq = (requestSeq + 1) & 0xff;
  }

  /** One client packet of the file; the empty one ends it. */
  relay(packet: MysqlPacket): void {
    if (this.ended || !this.conn.alive) return; // the session closes once the command ends
    this.nextSeq = (packet.lastSequenceId + 1) & 0xff;
    if (packet.payload.length === 0) this.ended = true;
    if (this.conn.upload(packet.wire) || this.paused) return;
    this.paused = true;
    this.client.pause();
    this.conn.whenDrained(this.resume);
  }

  private readonly resume = (): void => {
    if (!this.paused) return;
    this.paused = false;
    if (!this.client.destroyed) this.client.resume();
  };

  /** The command ended (or the session closes): a client paused for the backend reads again. */
  finish(): void {
    this.resume();
  }
}
