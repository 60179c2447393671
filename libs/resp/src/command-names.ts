// Looks a command name up by its bytes, ignoring case, without creating a string per command.

function fold(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
}

/** FNV-1a over case-folded bytes. */
function hashBytes(buf: Buffer | Uint8Array, offset: number, length: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ fold(buf[offset + i]), 0x01000193);
  return h >>> 0;
}

/**
 * An open-addressing table from command names (`GET`, `CLUSTER`, ...) to values (a command
 * descriptor, a routing rule). `get(buf, offset, length)` hashes the argument in place.
 */
export class CommandNameIndex<T> {
  private readonly names: Array<Buffer | undefined>;
  private readonly values: Array<T | undefined>;
  private readonly mask: number;

  constructor(entries: Iterable<readonly [string, T]>) {
    const list = [...entries];
    let size = 8;
    while (size < list.length * 2) size *= 2;
    this.mask = size - 1;
    this.names = new Array<Buffer | undefined>(size).fill(undefined);
    this.values = new Array<T | undefined>(size).fill(undefined);
    for (const [name, value] of list) this.insert(Buffer.from(name.toLowerCase(), 'latin1'), value);
  }

  /** The value for the name in `buf[offset, offset + length)`, any letter case. */
  get(buf: Buffer, offset: number, length: number): T | undefined {
    for (let slot = hashBytes(buf, offset, length) & this.mask; ; slot = (slot + 1) & this.mask) {
      const name = this.names[slot];
      if (name === undefined) return undefined;
      if (name.length === length && this.matches(name, buf, offset)) return this.values[slot];
    }
  }

  /** The value for a name given as a string. */
  lookup(name: string): T | undefined {
    const bytes = Buffer.from(name, 'latin1');
    return this.get(bytes, 0, bytes.length);
  }

  private matches(name: Buffer, buf: Buffer, offset: number): boolean {
    for (let i = 0; i < name.length; i++) if (name[i] !== fold(buf[offset + i])) return false;
    return true;
  }

  private insert(name: Buffer, value: T): void {
    let slot = hashBytes(name, 0, name.length) & this.mask;
    while (this.names[slot] !== undefined && !this.names[slot]?.equals(name)) slot = (slot + 1) & this.mask;
    this.names[slot] = name;
    this.values[slot] = value;
  }
}
