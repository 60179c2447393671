// Runs mysql-edge with the topology service from the compiled dist/ (npm run build), independent of
// which other services the launcher build contains: node edge-launcher.cjs CONFIG [worker]
// (worker processes of mysql-edge are forked from this file with `worker`).
'use strict';
const { join } = require('node:path');
const dist = join(__dirname, '..', '..', '..', 'dist', 'libs');
const { runMain } = require(join(dist, 'runtime', 'src', 'index.js'));
const { mysqlEdgeService } = require(join(dist, 'mysql-edge', 'src', 'index.js'));
const { topologyService } = require(join(dist, 'topology', 'src', 'index.js'));

const configPath = process.argv[2];
const worker = process.argv[3] === 'worker';
void runMain({
  services: worker ? [mysqlEdgeService] : [topologyService, mysqlEdgeService],
  configPath,
  version: 'bench',
  worker,
  workerLauncher: { modulePath: __filename, args: () => [configPath, 'worker'] },
  report: (line) => process.stderr.write(`${line}\n`),
});
