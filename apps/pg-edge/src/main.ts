// pg-edge as its own process: `node dist/apps/pg-edge/src/main.js --config FILE`.
import { pgEdgeService } from '@dbproxy/pg-edge';
import { runMain } from '@dbproxy/runtime';

const args = process.argv.slice(2);
const at = args.findIndex((a) => a === '--config' || a === '-c');
const configPath = at >= 0 ? args[at + 1] : undefined;
if (!configPath) {
  process.stderr.write('usage: pg-edge --config FILE\n');
  process.exitCode = 2;
} else {
  void runMain({ services: [pgEdgeService], configPath, version: '0.1.0', report: (line) => process.stderr.write(`${line}\n`) });
}
