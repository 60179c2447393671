// Every redis-edge error code is documented in the README's Errors table, and the one translator
// gives each the error prefix clients parse.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorReply, RedisEdgeErrors } from './errors';

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
    expect(errorReply(new Error('line\r\nbreak')).toString()).toBe('-ERR line break\r\n');
    // a connect failure's OS error and address are for the log
    const refused = RedisEdgeErrors.backendConnect('r1', '10.0.0.5:6379: connect ECONNREFUSED 10.0.0.5:6379');
    expect(refused.message).toContain('10.0.0.5');
    expect(errorReply(refused).toString()).toBe('-ERR backend r1 is unavailable (details in the edge log)\r\n');
  });
});
