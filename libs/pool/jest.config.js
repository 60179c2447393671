module.exports = { ...require('../../jest.preset.js'), displayName: 'pool', rootDir: __dirname };
