// pg-edge as its own process: `node dist/apps/pg-edge/src/main.js [worker] --config FILE`
// (with [bus] nats_url and [postgres] workers > 1 it forks its worker processes itself).
import { pgEdgeService } from '@dbproxy/pg-edge';
import { runMain } from '@dbproxy/runtime';

const args = process.argv.slice(2);
const worker = args[0] === 'worker';
const at = args.findIndex((a) => a === '--config' || a === '-c');
const configPath = at >= 0 ? args[at + 1] : undefined;
if (!configPath) {
  process.stderr.write('usage: pg-edge [worker] --config FILE\n');
  process.exitCode = 2;
} else {
  void runMain({
    services: [pgEdgeService],
    configPath,
    version: '0.1.0',
    worker,
    workerLauncher: { modulePath: __filename, args: () => ['worker', '--config', configPath] },
    report: (line) => process.stderr.write(`${line}\n`),
  });
}
