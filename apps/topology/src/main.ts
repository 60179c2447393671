// Public entry point of topology-app.
export {};
