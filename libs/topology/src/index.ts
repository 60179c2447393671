// Public entry point of topology.
export {};
