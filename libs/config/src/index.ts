// Public entry point of config.
export {};
