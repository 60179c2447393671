module.exports = { ...require('../../jest.preset.js'), displayName: 'pg-edge', rootDir: __dirname };
