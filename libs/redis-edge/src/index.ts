// Public entry point of redis-edge.
export {};
