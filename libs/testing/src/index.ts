// Public entry point of testing.
export {};
