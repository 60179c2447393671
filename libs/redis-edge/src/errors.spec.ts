// Every redis-edge error code is documented in the README's Errors table, and the one translator
// gives each the error prefix clients parse.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorReply, INTERNAL_ERROR_MESSAGE, RedisEdgeErrors } from './errors';

describe('redis-edge errors', () => {
  it('are unique and documented', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const codes = Object.values(RedisEdgeErrors).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes.filter((c) => !readme.includes(`\`${c}\``))).toEqual([]);
  });

  it('become Redis error replies with the prefix clients act on', () => {
    expect(errorReply(RedisEdgeErrors.maxClients()).toString()).toBe('-ERR max number of clients reached\r\n');
    expect(errorReply(RedisEdgeErrors.crossSlot('slot')).toString()).toBe("-CROSSSLOT Keys in request don't hash to the same slot\r\n");
    expect(errorReply(RedisEdgeErrors.redirectLimit(12)).toString()).toBe('-TRYAGAIN slot 12 kept moving: retry the command\r\n');
    expect(errorReply(RedisEdgeErrors.loading()).toString()).toMatch(/^-LOADING /);
    expect(errorReply(RedisEdgeErrors.execAbort()).toString()).toBe('-EXECABORT Transaction discarded because of previous errors.\r\n');
    expect(errorReply(RedisEdgeErrors.shardInvalid('line\r\nbreak', 'not a number')).toString()).toBe('-ERR invalid shard value "line break": not a number\r\n');
    // a connect failure's OS error and address are for the log
    const refused = RedisEdgeErrors.backendConnect('r1', '10.0.0.5:6379: connect ECONNREFUSED 10.0.0.5:6379');
    expect(refused.message).toContain('10.0.0.5');
    expect(errorReply(refused).toString()).toBe('-ERR backend r1 is unavailable (details in the edge log)\r\n');
  });

  it('gives any exception that is not a dbproxy error a fixed text, never its own', () => {
    const os = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:6379'), { code: 'ECONNREFUSED', address: '10.0.0.5' });
    const thrown: unknown[] = [new Error('line\r\nbreak'), new TypeError("Cannot read properties of undefined (reading 'endpoint')"), os, 'a string', undefined];
    for (const err of thrown) expect(errorReply(err).toString()).toBe(`-ERR ${INTERNAL_ERROR_MESSAGE}\r\n`);
    expect(INTERNAL_ERROR_MESSAGE).toBe('internal error in the proxy (details in the edge log)');
  });
});
