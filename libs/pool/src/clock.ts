// The pool's two clocks. Waits are measured with the monotonic performance.now(), only on the
// slow path (a waiter). Connection ages (created, idle since, reset started) use Date.now(),
// read by BackendPool only on slow paths and cached for the rest; a wall-clock jump only moves
// an idle-timeout or lifetime close earlier or later, which is harmless.
export const monotonicNow = (): number => performance.now();
export const connectionClock = (): number => Date.now();
