module.exports = { ...require('../../jest.preset.js'), displayName: 'topology', rootDir: __dirname };
