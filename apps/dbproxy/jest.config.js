module.exports = { ...require('../../jest.preset.js'), displayName: 'dbproxy-app', rootDir: __dirname };
