// Sequence ids of packets of 16 MiB - 1 bytes and more, which take several frames: where a
// command's last frame is (its response follows it), and renumbering a forwarded response.
/** Wire bytes of a packet of one frame are shorter (a payload of 0xffffff bytes takes a second, empty frame). */
const LARGE_WIRE = 0xffffff + 4;

/** Adds `shift` to the sequence id of every frame of a packet's wire bytes (in place). */
export function renumber(wire: Buffer, shift: number): void {
  for (let at = 0; at + 4 <= wire.length; at += 4 + wire.readUIntLE(at, 3)) wire[at + 3] = ((wire[at + 3] as number) + shift) & 0xff;
}

/** Sequence id of the last frame of a command's wire bytes (sent from 0): frames of 0xffffff bytes until a shorter one. */
export function lastFrameSeq(wire: Buffer): number {
  if (wire.length < LARGE_WIRE) return 0;
  let seq = 0;
  for (let at = 0; at + 4 <= wire.length; at += 4 + wire.readUIntLE(at, 3)) seq = wire[at + 3] as number;
  return seq;
}
