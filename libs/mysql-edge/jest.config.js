module.exports = { ...require('../../jest.preset.js'), displayName: 'mysql-edge', rootDir: __dirname };
