module.exports = { ...require('../../jest.preset.js'), displayName: 'util', rootDir: __dirname };
