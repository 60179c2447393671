// Test helpers of @dbproxy/runtime (the `@dbproxy/runtime/testing` entry): run ./bin/dbproxy as
// a real child process, or given services in one runtime in this process.
export { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from './dbproxy-process';
export {
  HEALTH_INTERVAL_SECONDS,
  backendsView,
  backendToml,
  commonToml,
  metricValue,
  startTestRuntime,
  type BackendSpec,
  type BackendsView,
  type BgdActionBody,
  type CommonTomlParts,
  type ReadyzAnswer,
  type TestRuntime,
  type TestRuntimeOptions,
  type TopologyBackendView,
} from './test-runtime';
export { startProxyFront, type ProxyFront, type ProxyFrontOptions } from './proxy-protocol-front';
