// topology as its own process: `node dist/apps/topology/src/main.js --config FILE`.
import { runMain } from '@dbproxy/runtime';
import { topologyService } from '@dbproxy/topology';

const args = process.argv.slice(2);
const at = args.findIndex((a) => a === '--config' || a === '-c');
const configPath = at >= 0 ? args[at + 1] : undefined;
if (!configPath) {
  process.stderr.write('usage: topology --config FILE\n');
  process.exitCode = 2;
} else {
  void runMain({ services: [topologyService], configPath, version: '0.1.0', report: (line) => process.stderr.write(`${line}\n`) });
}
