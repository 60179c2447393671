// Public entry point of redis-edge: the Redis listeners in connection mode and command mode.
export { redisEdgeService } from './service';
export { RedisEdgeErrors, errorReply } from './errors';
