// Public entry point of bus.
export {};
