// Runs pg-edge with the topology service in one process from the compiled dist/ (npm run build),
// independent of which other services the launcher build contains:
//   node edge-launcher.cjs CONFIG            (with [bus] nats_url and [postgres] workers > 1 it forks workers)
//   node edge-launcher.cjs CONFIG worker     (a worker, forked by the above)
'use strict';
const { join } = require('node:path');
const dist = join(__dirname, '..', '..', '..', 'dist', 'libs');
const { runMain } = require(join(dist, 'runtime', 'src', 'index.js'));
const { pgEdgeService } = require(join(dist, 'pg-edge', 'src', 'index.js'));
const { topologyService } = require(join(dist, 'topology', 'src', 'index.js'));

const [configPath, role] = process.argv.slice(2);
const worker = role === 'worker';
void runMain({
  services: worker ? [pgEdgeService] : [topologyService, pgEdgeService],
  configPath,
  version: 'bench',
  allInOne: !worker,
  worker,
  workerLauncher: { modulePath: __filename, args: () => [configPath, 'worker'] },
  report: (line) => process.stderr.write(`${line}\n`),
});
