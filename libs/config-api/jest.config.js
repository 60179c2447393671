module.exports = { ...require('../../jest.preset.js'), displayName: 'config-api', rootDir: __dirname };
