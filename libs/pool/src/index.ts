// Public entry point of pool.
export {};
