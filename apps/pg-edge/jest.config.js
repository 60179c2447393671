module.exports = { ...require('../../jest.preset.js'), displayName: 'pg-edge-app', rootDir: __dirname };
