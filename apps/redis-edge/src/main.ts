// Public entry point of redis-edge-app.
export {};
