module.exports = { ...require('../../jest.preset.js'), displayName: 'bgd-monitor', rootDir: __dirname };
