// Root Jest configuration: every app and library is a Jest project; `npm test` runs them all.
module.exports = {
  projects: ['<rootDir>/libs/*/jest.config.js', '<rootDir>/apps/*/jest.config.js'],
  reporters: ['default', '<rootDir>/tools/test/summary-reporter.js'],
  maxWorkers: 2,
};
