module.exports = { ...require('../../jest.preset.js'), displayName: 'sql', rootDir: __dirname };
