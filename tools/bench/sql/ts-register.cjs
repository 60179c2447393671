// Lets the SQL benchmark load the TypeScript sources directly: each .ts file is compiled on require
// with TypeScript's transpileModule (the same CommonJS output as `npm run build`, without type
// checking), and @dbproxy/<lib> resolves to libs/<lib>/src/index.ts. No build step, no dist/.
'use strict';
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.resolve(__dirname, '../../..');
const compilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true, sourceMap: false };
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
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
