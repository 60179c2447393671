#!/usr/bin/env node
// Creates the files every Nx project in this workspace has: package.json, project.json,
// jest.config.js and src/index.ts. Usage: node tools/scripts/new-project.mjs lib NAME TYPE SCOPE
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [kind, name, type, scope] = process.argv.slice(2);
if (!['lib', 'app'].includes(kind) || !name || !type || !scope) {
  console.error('usage: new-project.mjs lib|app NAME TYPE SCOPE');
  process.exit(2);
}
const dir = join(kind === 'lib' ? 'libs' : 'apps', name);
const project = kind === 'lib' ? name : `${name}-app`;
if (existsSync(dir)) {
  console.error(`${dir} exists`);
  process.exit(2);
}
mkdirSync(join(dir, 'src'), { recursive: true });
const entry = kind === 'lib' ? 'index' : 'main';
const write = (file, text) => writeFileSync(join(dir, file), text);
write(
  'package.json',
  JSON.stringify(
    {
      name: `@dbproxy/${project}`,
      version: '0.0.0',
      private: true,
      main: `src/${entry}.ts`,
      types: `src/${entry}.ts`,
    },
    null,
    2,
  ) + '\n',
);
write(
  'project.json',
  JSON.stringify(
    {
      name: project,
      $schema: '../../node_modules/nx/schemas/project-schema.json',
      sourceRoot: `${dir}/src`,
      projectType: kind === 'lib' ? 'library' : 'application',
      tags: [`type:${type}`, `scope:${scope}`],
      targets: {
        test: { executor: '@nx/jest:jest', options: { jestConfig: `${dir}/jest.config.js` } },
        lint: { executor: '@nx/eslint:lint', options: { lintFilePatterns: [dir] } },
      },
    },
    null,
    2,
  ) + '\n',
);
write(
  'jest.config.js',
  `module.exports = { ...require('../../jest.preset.js'), displayName: '${project}', rootDir: __dirname };\n`,
);
if (!existsSync(join(dir, 'src', `${entry}.ts`))) write(join('src', `${entry}.ts`), `// Public entry point of ${project}.\nexport {};\n`);
console.log(`created ${dir}`);
