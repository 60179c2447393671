module.exports = { ...require('../../jest.preset.js'), displayName: 'redis-edge', rootDir: __dirname };
