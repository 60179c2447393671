module.exports = { ...require('../../jest.preset.js'), displayName: 'mysql-edge-app', rootDir: __dirname };
