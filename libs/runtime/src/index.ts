// Public entry point of runtime.
export {};
