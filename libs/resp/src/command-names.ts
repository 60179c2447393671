// Looks a command name up by its bytes, ignoring case, without creating a string per command.
import { Buffer } from 'node:buffer';

/** FNV-1a over bytes with ASCII letters folded to lower case ('A'..'Z' are 0x41..0x5a). */
function hashBytes(buf: Uint8Array, offset: number, length: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < length; i++) {
    const b = buf[offset + i];
    h = Math.imul(h ^ (b >= 0x41 && b <= 0x5a ? b | 0x20 : b), 0x01000193);
  }
  return h >>> 0;
}

const EMPTY = new Uint8Array(0);

/** `lowered` (a stored lower-case name) equals the bytes at `offset`, letters compared case-insensitively. */
function matches(lowered: Uint8Array, buf: Uint8Array, offset: number): boolean {
  for (let i = 0; i < lowered.length; i++) {
    const b = buf[offset + i];
    if (lowered[i] !== (b >= 0x41 && b <= 0x5a ? b | 0x20 : b)) return false;
  }
  return true;
}

/**
 * An open-addressing table from command names (`GET`, `CLUSTER`, ...) to values (a command
 * descriptor, a routing rule). `get(buf, offset, length)` hashes the argument in place.
 */
export class CommandNameIndex<T> {
  private readonly names: Uint8Array[];
  /** Length of the name in each slot; -1 marks an empty slot. */
  private readonly lengths: Int32Array;
  private readonly values: Array<T | undefined>;
  private readonly mask: number;

  constructor(entries: Iterable<readonly [string, T]>) {
    const list = [...entries];
    let size = 8;
    while (size < list.length * 2) size *= 2;
    this.mask = size - 1;
    this.names = new Array<Uint8Array>(size).fill(EMPTY);
    this.lengths = new Int32Array(size).fill(-1);
    this.values = new Array<T | undefined>(size).fill(undefined);
    for (const [name, value] of list) this.insert(Buffer.from(name.toLowerCase(), 'latin1'), value);
  }

  /** The value for the name in `buf[offset, offset + length)`, any letter case. */
  get(buf: Uint8Array, offset: number, length: number): T | undefined {
    for (let slot = hashBytes(buf, offset, length) & this.mask; ; slot = (slot + 1) & this.mask) {
      const slotLength = this.lengths[slot];
      if (slotLength < 0) return undefined;
      if (slotLength === length && matches(this.names[slot], buf, offset)) return this.values[slot];
    }
  }

  /** The value for a name given as a string. */
  lookup(name: string): T | undefined {
    const bytes = Buffer.from(name, 'latin1');
    return this.get(bytes, 0, bytes.length);
  }

  private insert(name: Buffer, value: T): void {
    let slot = hashBytes(name, 0, name.length) & this.mask;
    while (this.lengths[slot] >= 0 && !(this.lengths[slot] === name.length && matches(this.names[slot], name, 0))) slot = (slot + 1) & this.mask;
    this.names[slot] = name;
    this.lengths[slot] = name.length;
    this.values[slot] = value;
  }
}
