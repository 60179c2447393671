// Public entry point of libs/config-api: the config-api service definition.
export { configApiService } from './service';
export { parseIfMatch } from './routes/config-routes';
export { authenticate, type Caller } from './auth';
export { ConfigHistoryRecord, HistoryEntry } from './history';
export { ActionLog, recordAction, type ActionEntry, type ActionKind } from './action-log';
export { checkListenExposure, isLoopback, PUBLISHED_EXAMPLE_TOKENS, ConfigApiListenErrors } from './listen-guard';
