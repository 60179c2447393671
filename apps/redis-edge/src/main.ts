// redis-edge as its own process: `node dist/apps/redis-edge/src/main.js --config FILE`.
import { redisEdgeService } from '@dbproxy/redis-edge';
import { runMain } from '@dbproxy/runtime';

const args = process.argv.slice(2);
const at = args.findIndex((a) => a === '--config' || a === '-c');
const configPath = at >= 0 ? args[at + 1] : undefined;
if (!configPath) {
  process.stderr.write('usage: redis-edge --config FILE\n');
  process.exitCode = 2;
} else {
  void runMain({ services: [redisEdgeService], configPath, version: '0.1.0', report: (line) => process.stderr.write(`${line}\n`) });
}
