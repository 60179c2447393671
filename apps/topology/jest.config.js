module.exports = { ...require('../../jest.preset.js'), displayName: 'topology-app', rootDir: __dirname };
