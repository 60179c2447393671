// Public entry point of topology-client.
export {};
