// Small building blocks shared by every library: the error registry, a bounded LRU, the
// diagnostics channel names, the state transition tallies and emptyArray.
export * from './errors';
export * from './lru';
export * from './channels';
export * from './operational-events';
export * from './transition-tally';
export * from './arrays';
