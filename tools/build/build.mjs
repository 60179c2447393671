#!/usr/bin/env node
// Compiles every app and library to dist/ with one incremental tsc run, then writes
// dist/node_modules/@dbproxy/<lib> so compiled code resolves @dbproxy/* to compiled code.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);

for (const lib of readdirSync('libs')) {
  const { name } = JSON.parse(readFileSync(join('libs', lib, 'package.json'), 'utf8'));
  const dir = join('dist', 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  const main = `../../../libs/${lib}/src/index.js`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, main }) + '\n');
}
