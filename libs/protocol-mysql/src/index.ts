// Public entry point of protocol-mysql.
export {};
