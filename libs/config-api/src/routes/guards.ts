// The two authorization levels of the config API, bound to the live [config_api] tokens.
import type { preHandlerAsyncHookHandler } from 'fastify';

export interface RouteGuards {
  readonly read: preHandlerAsyncHookHandler;
  readonly write: preHandlerAsyncHookHandler;
}
