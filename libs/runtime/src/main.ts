// Process entry for services: start the runtime, drain on SIGTERM/SIGINT, reload on SIGHUP, set
// the exit code (0 after a clean drain, 1 when a service overran the shutdown deadline or failed
// to drain or close, 1 when start-up fails — after stopping what had started —, 2 when the
// configuration is invalid).
import { formatIssue } from '@dbproxy/config';
import { errorMessage } from '@dbproxy/util';
import { exitAfterFlush, InvalidConfigFile, startRuntime, type Runtime, type RuntimeOptions } from './runtime';
import { StartupFailed } from './start-failure';

/** After a start-up failure everything started is closed; a part that still holds the event loop does not keep the process up past this. */
const STARTUP_FAILURE_EXIT_MS = 1_000;

export interface MainOptions extends RuntimeOptions {
  /** Where start-up failures are written (stderr). */
  readonly report: (line: string) => void;
}

export async function runMain(opts: MainOptions): Promise<Runtime | undefined> {
  let runtime: Runtime;
  // a SIGHUP while starting must not kill the process (its default action)
  const hupWhileStarting = () => opts.report('SIGHUP during start-up: ignored');
  process.on('SIGHUP', hupWhileStarting);
  try {
    runtime = await startRuntime(opts);
  } catch (err) {
    if (err instanceof InvalidConfigFile) {
      opts.report(`${opts.configPath}: ${err.message}`);
      for (const issue of err.issues) opts.report(`  ${formatIssue(issue)}`);
      process.exitCode = 2;
    } else {
      opts.report(`dbproxy failed to start: ${err instanceof StartupFailed ? err.message : errorMessage(err)}; every service started in this process was stopped (exit code 1)`);
      process.exitCode = 1;
      setTimeout(() => process.exit(1), STARTUP_FAILURE_EXIT_MS).unref();
    }
    return undefined;
  } finally {
    process.off('SIGHUP', hupWhileStarting);
  }
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      opts.report(`second ${signal}: exiting without waiting for the drain`);
      process.exit(1);
    }
    void stopAndExit(runtime, signal, opts);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // SIGHUP reloads (embedded bus) or is logged and ignored (NATS, worker processes); never the default (exit)
  process.on('SIGHUP', () => {
    if (signals > 0) return;
    runtime.reload().catch((err: unknown) => runtime.logger.error({ err: errorMessage(err) }, 'SIGHUP handling failed'));
  });
  // A worker whose primary went away has nobody to hand it connections: drain and leave.
  if (opts.worker) process.once('disconnect', () => void stopAndExit(runtime, 'primary disconnected', opts));
  return runtime;
}

/**
 * Drains, then exits: 0 after a clean drain — at once for a worker (its IPC channel would keep
 * it alive), otherwise when the event loop empties, or after a short grace if something still
 * holds it; 1 as soon as the logs are out when a service overran the deadline or failed.
 */
async function stopAndExit(runtime: Runtime, reason: string, opts: MainOptions): Promise<void> {
  let code = 0;
  try {
    const report = await runtime.shutdown(reason);
    if (!report.clean) {
      const names = [...report.overran, ...report.failed.filter((n) => !report.overran.includes(n))];
      opts.report(`shutdown not clean: ${names.join(', ')} overran the deadline or failed (exit code 1)`);
      code = 1;
    }
  } catch (err) {
    opts.report(`shutdown failed: ${errorMessage(err)}`);
    code = 1;
  }
  process.exitCode = code;
  if (opts.worker || code !== 0) return exitAfterFlush(runtime.logger, code);
  setTimeout(() => process.exit(code), 2_000).unref();
}
