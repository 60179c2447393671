// Small building blocks shared by every library: the error registry, a bounded LRU, the
// diagnostics channel names and the state transition tallies.
export * from './errors';
export * from './lru';
export * from './channels';
export * from './operational-events';
export * from './transition-tally';
