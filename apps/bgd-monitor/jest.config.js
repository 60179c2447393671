module.exports = { ...require('../../jest.preset.js'), displayName: 'bgd-monitor-app', rootDir: __dirname };
