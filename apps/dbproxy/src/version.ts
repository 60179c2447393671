// The version dbproxy reports in heartbeats and the OpenAPI document.
export const VERSION = '0.1.0';
