// Shared Jest settings: SWC transpiles TypeScript (type checking is `npm run typecheck`),
// and @dbproxy/* imports resolve to library sources, never to the built dist/.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [name, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${name}$`] = path.join(__dirname, target);
  moduleNameMapper[`^${name}/testing$`] = path.join(__dirname, path.dirname(target), 'testing', 'index.ts');
}

module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
};
