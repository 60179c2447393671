// Test helpers of @dbproxy/runtime (the `@dbproxy/runtime/testing` entry): run ./bin/dbproxy as
// a real child process.
export { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from './dbproxy-process';
