// The pool's clock: monotonic milliseconds (performance.now), immune to wall-clock jumps.
export const monotonicNow = (): number => performance.now();
