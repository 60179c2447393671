// LocalServer failure paths, driven by shell scripts posing as servers.
import { join } from 'node:path';
import { ServerGroup } from './group';
import { isAlive } from './process-tree';
import { LocalServer, type ServerLaunch } from './server-process';
import { tmpDir } from './temp-dir';
import { waitFor } from './wait';

/** A "server" that is a shell script, to drive the failure paths without a database. */
async function scriptServer(script: string, options: Partial<ServerLaunch> = {}): Promise<{ server: LocalServer; group: ServerGroup }> {
  const group = new ServerGroup(await tmpDir('spec-server'));
  const dir = await group.memberDir('fake');
  const launch: ServerLaunch = {
    name: 'fake server',
    dir,
    dataDir: join(dir, 'data'),
    command: '/bin/sh',
    args: (port) => ['-c', script.replace('PORT', String(port))],
    stopSignal: 'SIGTERM',
    quickExitSignal: 'SIGKILL',
    probe: async () => false,
    startTimeoutMs: 400,
    ...options,
  };
  return { server: group.track(new LocalServer(launch, 19_999)), group };
}

describe('LocalServer failures', () => {
  it('reports an early exit with the exit code, its files and the log tail', async () => {
    const { server, group } = await scriptServer('echo "fatal: bad setting on PORT"; exit 3');
    try {
      const failure = await server.start().catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: 'DBP_ERR_TESTING_SERVER_EXITED' });
      const message = (failure as Error).message;
      expect(message).toContain('exit code 3');
      expect(message).toContain(server.logFile);
      expect(message).toContain(server.dataDir);
      expect(message).toContain('fatal: bad setting on 19999');
      expect(server.pid).toBeUndefined();
    } finally {
      await group.destroy();
    }
  });

  it('reports a readiness timeout with the log tail and kills the process', async () => {
    const { server, group } = await scriptServer('echo "still recovering"; exec sleep 30');
    try {
      const failure = await server.start().catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: 'DBP_ERR_TESTING_START_TIMEOUT' });
      expect((failure as Error).message).toContain('still recovering');
      expect(server.pid).toBeUndefined();
    } finally {
      await group.destroy();
    }
  });

  it('reports "address already in use" in the log as DBP_ERR_TESTING_PORT_IN_USE', async () => {
    const { server, group } = await scriptServer('echo "bind: Address already in use" >&2; exit 1');
    try {
      await expect(server.start()).rejects.toMatchObject({ code: 'DBP_ERR_TESTING_PORT_IN_USE' });
    } finally {
      await group.destroy();
    }
  });

  it('refuses start() while running, and stop()/kill() are no-ops when stopped', async () => {
    const { server, group } = await scriptServer('exec sleep 30', { probe: async () => true });
    try {
      await server.start();
      expect(server.pid).toEqual(expect.any(Number));
      await expect(server.start()).rejects.toMatchObject({ code: 'DBP_ERR_TESTING_WRONG_STATE' });
      await server.stop();
      await server.stop();
      await server.kill();
      expect(server.pid).toBeUndefined();
    } finally {
      await group.destroy();
    }
  });

  it('treats a server that died by itself as stopped, so start() brings it back', async () => {
    const { server, group } = await scriptServer('exec sleep 30', { probe: async () => true });
    try {
      await server.start();
      const first = server.pid as number;
      process.kill(first, 'SIGKILL');
      await waitFor(() => server.pid === undefined);
      await server.start();
      expect(server.pid).not.toBe(first);
      expect(isAlive(server.pid as number)).toBe(true);
    } finally {
      await group.destroy();
    }
  });

  it('kills a server that ignores its stop signal and reports DBP_ERR_TESTING_STOP_TIMEOUT', async () => {
    const { server, group } = await scriptServer("trap '' USR1; echo trapped; sleep 30 & wait", {
      probe: async (s) => s.logTail().includes('trapped'), // ready only once the trap is in place
      stopSignal: 'SIGUSR1',
      stopTimeoutMs: 300,
    });
    try {
      await server.start();
      const pid = server.pid as number;
      await expect(server.stop()).rejects.toMatchObject({ code: 'DBP_ERR_TESTING_STOP_TIMEOUT' });
      expect(isAlive(pid)).toBe(false);
    } finally {
      await group.destroy();
    }
  });
});
