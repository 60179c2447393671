// mysql-edge as its own process: `node dist/apps/mysql-edge/src/main.js --config FILE`
// (worker processes, when configured, are forked from this same entry with `worker`).
import { mysqlEdgeService } from '@dbproxy/mysql-edge';
import { runMain } from '@dbproxy/runtime';

const args = process.argv.slice(2);
const worker = args[0] === 'worker';
const at = args.findIndex((a) => a === '--config' || a === '-c');
const configPath = at >= 0 ? args[at + 1] : undefined;
if (!configPath) {
  process.stderr.write('usage: mysql-edge --config FILE\n');
  process.exitCode = 2;
} else {
  void runMain({
    services: [mysqlEdgeService],
    configPath,
    version: '0.1.0',
    worker,
    workerLauncher: { modulePath: __filename, args: () => ['worker', '--config', configPath] },
    report: (line) => process.stderr.write(`${line}\n`),
  });
}
