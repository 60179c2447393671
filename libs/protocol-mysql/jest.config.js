module.exports = { ...require('../../jest.preset.js'), displayName: 'protocol-mysql', rootDir: __dirname };
