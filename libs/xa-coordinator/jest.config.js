module.exports = { ...require('../../jest.preset.js'), displayName: 'xa-coordinator', rootDir: __dirname };
