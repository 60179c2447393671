// config-api as its own process: `node dist/apps/config-api/src/main.js --config FILE`.
import { configApiService } from '@dbproxy/config-api';
import { runMain } from '@dbproxy/runtime';

const args = process.argv.slice(2);
const at = args.findIndex((a) => a === '--config' || a === '-c');
const configPath = at >= 0 ? args[at + 1] : undefined;
if (!configPath) {
  process.stderr.write('usage: config-api --config FILE\n');
  process.exitCode = 2;
} else {
  void runMain({ services: [configApiService], configPath, version: '0.1.0', report: (line) => process.stderr.write(`${line}\n`) });
}
