module.exports = { ...require('../../jest.preset.js'), displayName: 'redis-edge-app', rootDir: __dirname };
