// Connection status shared by both buses: the current value, listeners, and waiting for 'connected'.
import { BusErrors } from './errors';
import type { BusStatus } from './types';

export class ConnectionStatus {
  private current: BusStatus;
  private readonly listeners = new Set<(status: BusStatus) => void>();

  constructor(
    initial: BusStatus,
    private readonly target: string,
  ) {
    this.current = initial;
  }

  get value(): BusStatus {
    return this.current;
  }

  set(next: BusStatus): void {
    if (next === this.current || this.current === 'closed') return;
    this.current = next;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure must not stop the others or the connection handling.
      }
    }
  }

  listen(listener: (status: BusStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  waitFor(timeoutMs: number): Promise<void> {
    if (this.current === 'connected') return Promise.resolve();
    if (this.current === 'closed') return Promise.reject(BusErrors.closed('waiting for a connection'));
    return new Promise((resolve, reject) => {
      const done = (err?: Error): void => {
        clearTimeout(timer);
        remove();
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => done(BusErrors.connectTimeout(this.target, timeoutMs)), timeoutMs);
      const remove = this.listen((status) => {
        if (status === 'connected') done();
        else if (status === 'closed') done(BusErrors.closed('waiting for a connection'));
      });
    });
  }
}
