// Small building blocks shared by every library: the error registry, a bounded LRU and
// the diagnostics channel names.
export * from './errors';
export * from './lru';
export * from './channels';
export * from './operational-events';
