// Public entry point of config-api-app.
export {};
