// Runs mysql-edge with the topology service straight from the TypeScript sources (tools/bench/sql/
// ts-register.cjs: no build step): node ts-edge-launcher.cjs CONFIG. One process, no workers.
'use strict';
require('../sql/ts-register.cjs');
const { runMain } = require('../../../libs/runtime/src/index.ts');
const { mysqlEdgeService } = require('../../../libs/mysql-edge/src/index.ts');
const { topologyService } = require('../../../libs/topology/src/index.ts');

void runMain({
  services: [topologyService, mysqlEdgeService],
  configPath: process.argv[2],
  version: 'bench',
  report: (line) => process.stderr.write(`${line}\n`),
});
