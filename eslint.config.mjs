// Lint rules that encode DESIGN.md §1 and CONVENTIONS.md: Nx module boundaries by tag,
// pure codecs, configuration as the only reader of process.env, no console in libraries.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const codecLibs = ['libs/util', 'libs/sql', 'libs/routing', 'libs/protocol-mysql', 'libs/protocol-pg', 'libs/resp'];
const testFiles = ['**/*.spec.ts', '**/test/**/*.ts', '**/src/testing/**/*.ts'];
// Node defines the global Buffer as a getter: each use in optimised code is a call (about 35 ns here)
const bufferGlobal = { name: 'Buffer', message: "import { Buffer } from 'node:buffer' (the global is a getter, called at every use)." };

const typeConstraints = [
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:util', 'type:testing'] },
  { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:feature', 'type:util', 'type:codec', 'type:testing'] },
  { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:codec', 'type:testing'] },
  { sourceTag: 'type:codec', onlyDependOnLibsWithTags: ['type:pure', 'type:testing'] },
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:util', 'type:codec'] },
];
const scopeConstraints = [
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  { sourceTag: 'scope:launcher', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'scope:control', onlyDependOnLibsWithTags: ['scope:control', 'scope:shared'] },
  { sourceTag: 'scope:mysql', onlyDependOnLibsWithTags: ['scope:mysql', 'scope:shared'] },
  { sourceTag: 'scope:pg', onlyDependOnLibsWithTags: ['scope:pg', 'scope:shared'] },
  { sourceTag: 'scope:redis', onlyDependOnLibsWithTags: ['scope:redis', 'scope:shared'] },
];
const boundaries = (depConstraints) => ['error', { enforceBuildableLibDependency: false, allow: [], depConstraints }];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-nocheck': true, 'ts-ignore': true }],
      '@nx/enforce-module-boundaries': boundaries([...typeConstraints, ...scopeConstraints]),
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only libs/config reads the environment.' },
      ],
    },
  },
  {
    files: ['libs/**/*.ts', 'apps/**/*.ts'],
    ignores: testFiles,
    rules: {
      'no-console': 'error',
      'no-restricted-imports': ['error', { paths: [{ name: '@dbproxy/testing', message: 'libs/testing is for tests only.' }] }],
      'no-restricted-globals': ['error', bufferGlobal],
    },
  },
  {
    files: codecLibs.map((dir) => `${dir}/src/**/*.ts`),
    ignores: testFiles,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['net', 'node:net', 'tls', 'node:tls', 'dgram', 'node:dgram', 'fs', 'node:fs', 'child_process', 'node:child_process', 'pino', 'timers', 'node:timers', '@dbproxy/testing'],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'setImmediate', 'process', 'console', bufferGlobal],
    },
  },
  {
    // Integration tests compose real services across scopes (an edge beside the topology service).
    files: ['**/test/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(typeConstraints) },
  },
  { files: ['libs/config/src/**/*.ts'], rules: { 'no-restricted-properties': 'off' } },
  { files: ['apps/dbproxy/src/cli/**/*.ts', 'tools/**/*.ts'], rules: { 'no-console': 'off' } },
);
