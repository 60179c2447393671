// The source of randomness for salts and nonces, injectable so tests are deterministic.
import { randomBytes } from 'node:crypto';

/** Returns `size` random bytes. */
export type RandomSource = (size: number) => Buffer;

export const defaultRandom: RandomSource = (size) => randomBytes(size);
