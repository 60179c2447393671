// Test support for protocol-pg and its users: chunk feeders, hand-built bytes, message samples and arbitraries.
export * from './feeding';
export * from './bytes';
export * from './samples';
export * from './arbitraries';
