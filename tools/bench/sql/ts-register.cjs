// Lets the SQL benchmark load the TypeScript sources directly: SWC compiles each .ts file on require,
// and @dbproxy/<lib> resolves to libs/<lib>/src/index.ts. No build step, no dist/.
'use strict';
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');

const root = path.resolve(__dirname, '../../..');
const originalResolve = Module._resolveFilename;
Module._resolveFilename = function resolve(request, parent, ...rest) {
  const match = /^@dbproxy\/([a-z0-9-]+)$/.exec(request);
  if (match) return path.join(root, 'libs', match[1], 'src', 'index.ts');
  if ((request.startsWith('./') || request.startsWith('../')) && parent && parent.filename.endsWith('.ts')) {
    const candidate = path.resolve(path.dirname(parent.filename), request) + '.ts';
    if (fs.existsSync(candidate)) return candidate;
  }
  return originalResolve.call(this, request, parent, ...rest);
};

Module._extensions['.ts'] = function compile(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: false,
  });
  module._compile(code, filename);
};
