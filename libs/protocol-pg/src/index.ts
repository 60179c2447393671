// Public entry point of protocol-pg.
export {};
