// Public entry point of resp.
export {};
