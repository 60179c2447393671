// Runs pg-edge with the topology service in one process from the compiled dist/ (npm run build),
// independent of which other services the launcher build contains: node edge-launcher.cjs CONFIG
'use strict';
const { join } = require('node:path');
const dist = join(__dirname, '..', '..', '..', 'dist', 'libs');
const { runMain } = require(join(dist, 'runtime', 'src', 'index.js'));
const { pgEdgeService } = require(join(dist, 'pg-edge', 'src', 'index.js'));
const { topologyService } = require(join(dist, 'topology', 'src', 'index.js'));

void runMain({
  services: [topologyService, pgEdgeService],
  configPath: process.argv[2],
  version: 'bench',
  allInOne: true,
  report: (line) => process.stderr.write(`${line}\n`),
});
