// Public entry point of observability.
export {};
