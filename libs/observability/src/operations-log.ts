// Logs the operational events libraries publish (libs/util operational-events.ts): one line per
// session open and close, refused login and backend health change, each kind rate-limited.
import { channel } from 'node:diagnostics_channel';
import { Channels, type OperationalEvent } from '@dbproxy/util';
import { LogRateLimit } from './log-rate-limit';
import type { Logger } from './logging';

const MESSAGES: Record<OperationalEvent['event'], string> = {
  session_opened: 'session opened',
  session_closed: 'session closed',
  login_failed: 'login failed',
  backend_down: 'backend down',
  backend_up: 'backend up',
};

const WARNINGS: ReadonlySet<string> = new Set(['login_failed', 'backend_down']);

/** Subscribes `logger` to operational events, at most `limitPerSecond()` lines per kind per second (0 = no limit). */
export function logOperationalEvents(logger: Logger, limitPerSecond: () => number): () => void {
  const limits = new LogRateLimit(logger, limitPerSecond);
  const onEvent = (message: unknown) => {
    const event = message as OperationalEvent;
    const text = MESSAGES[event.event];
    if (text === undefined || !limits.admit(event.event)) return;
    if (WARNINGS.has(event.event)) logger.warn(event, text);
    else logger.info(event, text);
  };
  channel(Channels.operationalEvent).subscribe(onEvent);
  return () => {
    channel(Channels.operationalEvent).unsubscribe(onEvent);
    limits.flush();
  };
}
