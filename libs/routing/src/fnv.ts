// FNV-1a 64 over the UTF-8 bytes of a string, without allocating: the string hash of hash shard maps.

// 64-bit state kept as four 16-bit limbs (h0 lowest) so every product stays exact in a double.
const OFFSET = [0x2325, 0x8422, 0x9ce4, 0xcbf2]; // 0xcbf29ce484222325
// The prime is 0x100000001b3 = 2^40 + 0x1b3: limb 0 is 0x1b3 and limb 2 is 0x100.

/** The FNV-1a 64 state after hashing `text` as UTF-8 (lone surrogates encode as U+FFFD). */
function fnvLimbs(text: string, out: number[]): void {
  let h0 = OFFSET[0];
  let h1 = OFFSET[1];
  let h2 = OFFSET[2];
  let h3 = OFFSET[3];
  const step = (byte: number): void => {
    h0 ^= byte;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + h0 * 0x100 + (t1 >>> 16);
    h3 = (h3 * 0x1b3 + h1 * 0x100 + (t2 >>> 16)) & 0xffff;
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
  };
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      step(c);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else c = 0xfffd;
    }
    if (c < 0x800) {
      step(0xc0 | (c >> 6));
    } else if (c < 0x10000) {
      step(0xe0 | (c >> 12));
      step(0x80 | ((c >> 6) & 0x3f));
    } else {
      step(0xf0 | (c >> 18));
      step(0x80 | ((c >> 12) & 0x3f));
      step(0x80 | ((c >> 6) & 0x3f));
    }
    step(0x80 | (c & 0x3f));
  }
  out[0] = h0;
  out[1] = h1;
  out[2] = h2;
  out[3] = h3;
}

const scratch = [0, 0, 0, 0];

/** FNV-1a 64 of the UTF-8 bytes of `text`, as an unsigned bigint. */
export function fnv1a64(text: string): bigint {
  fnvLimbs(text, scratch);
  return (BigInt(scratch[3]) << 48n) | (BigInt(scratch[2]) << 32n) | (BigInt(scratch[1]) << 16n) | BigInt(scratch[0]);
}

/** FNV-1a 64 of the UTF-8 bytes of `text`, as 16 lowercase hex digits. */
export function fnv1a64Hex(text: string): string {
  fnvLimbs(text, scratch);
  let hex = '';
  for (let i = 3; i >= 0; i--) hex += scratch[i].toString(16).padStart(4, '0');
  return hex;
}

/** `fnv1a64(text) mod n` for 1 <= n < 2^36, computed without bigint. */
export function fnv1a64Mod(text: string, n: number): number {
  fnvLimbs(text, scratch);
  let r = scratch[3] % n;
  r = (r * 0x10000 + scratch[2]) % n;
  r = (r * 0x10000 + scratch[1]) % n;
  return (r * 0x10000 + scratch[0]) % n;
}
