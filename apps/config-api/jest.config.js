module.exports = { ...require('../../jest.preset.js'), displayName: 'config-api-app', rootDir: __dirname };
