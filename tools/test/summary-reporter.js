// Jest reporter that ends the run with the line CI reads: "tests: N passed, N failed[, N skipped]".
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const parts = [`tests: ${results.numPassedTests} passed`, `${failed} failed`];
    if (skipped > 0) parts.push(`${skipped} skipped`);
    process.stdout.write(`\n${parts.join(', ')}\n`);
  }
}
module.exports = SummaryReporter;
