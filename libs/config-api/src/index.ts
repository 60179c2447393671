// Public entry point of config-api.
export {};
