// bgd-monitor as its own process: `node dist/apps/bgd-monitor/src/main.js --config FILE`.
import { runMain } from '@dbproxy/runtime';
import { bgdMonitorService } from '@dbproxy/bgd-monitor';

const args = process.argv.slice(2);
const at = args.findIndex((a) => a === '--config' || a === '-c');
const configPath = at >= 0 ? args[at + 1] : undefined;
if (!configPath) {
  process.stderr.write('usage: bgd-monitor --config FILE\n');
  process.exitCode = 2;
} else {
  void runMain({ services: [bgdMonitorService], configPath, version: '0.1.0', report: (line) => process.stderr.write(`${line}\n`) });
}
