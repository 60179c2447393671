// Public entry point of routing.
export {};
