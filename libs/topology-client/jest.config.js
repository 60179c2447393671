module.exports = { ...require('../../jest.preset.js'), displayName: 'topology-client', rootDir: __dirname };
