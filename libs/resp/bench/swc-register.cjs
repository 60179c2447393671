// Lets plain `node` require this repository's TypeScript sources: @swc/core compiles each .ts
// file to CommonJS on load, and @dbproxy/<lib> resolves to libs/<lib>/src/index.ts.
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');

const root = path.resolve(__dirname, '../../..');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const lib = /^@dbproxy\/([a-z-]+)$/.exec(request);
  if (lib) return path.join(root, 'libs', lib[1], 'src', 'index.ts');
  if (request.startsWith('.') && parent && parent.filename && parent.filename.endsWith('.ts')) {
    const base = path.resolve(path.dirname(parent.filename), request);
    for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(candidate)) return candidate;
  }
  return resolve.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
