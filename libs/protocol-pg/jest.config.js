module.exports = { ...require('../../jest.preset.js'), displayName: 'protocol-pg', rootDir: __dirname };
