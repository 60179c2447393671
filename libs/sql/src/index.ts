// Public entry point of sql.
export {};
