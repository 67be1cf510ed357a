/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after jest's own summary, so any
 * tool that reads test output can tell how many tests ran.
 */
export default class PlainSummaryReporter {
  onRunComplete(_contexts, results) {
    process.stdout.write(`\n${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests + results.numTodoTests} skipped\n`);
  }
}
