module.exports = { ...require('../../jest.preset.js'), displayName: 'xa-coordinator-app', rootDir: __dirname };
