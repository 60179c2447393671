// Latency of connection mode, whose bytes are relayed unread (no command or reply boundaries): an
// exchange starts with client bytes that arrive while none await an answer and ends with the
// backend's first bytes after them. Pipelined commands are one exchange; pushes that no client
// bytes asked for (pub/sub messages) are not timed.
import { latencyClock, type LatencyCell } from '@dbproxy/observability';

/** The `route` of connection mode's latency series. */
export const CONNECTION_ROUTE = 'connection';

export class ExchangeTiming {
  /** When the unanswered client bytes arrived; 0 while nothing awaits an answer. */
  private startedAt = 0;

  constructor(private readonly cell: LatencyCell) {}

  clientSent(): void {
    if (this.startedAt === 0) this.startedAt = latencyClock();
  }

  backendAnswered(): void {
    if (this.startedAt === 0) return;
    this.cell.since(this.startedAt);
    this.startedAt = 0;
  }
}
