module.exports = { ...require('../../jest.preset.js'), displayName: 'resp', rootDir: __dirname };
