// `dbproxy top`: a full-screen view of config-api's edges, backends, pools and sessions, redrawn
// every interval on the terminal's alternate screen; q or Ctrl-C quits and restores the terminal.
import { errorMessage } from '@dbproxy/util';
import { ApiClient } from './api-client';
import type { OperatorCommand } from './operator-args';
import { renderTop, takeSample, type TopSample } from './top-view';

const ENTER = '\x1b[?1049h\x1b[?25l'; // alternate screen, cursor hidden
const LEAVE = '\x1b[?25h\x1b[?1049l';
const HOME = '\x1b[H';
const CLEAR_LINE = '\x1b[K';
const CLEAR_BELOW = '\x1b[J';
const CTRL_C = '\x03';

export async function topCommand(command: OperatorCommand, err: (line: string) => void): Promise<number> {
  const { stdin, stdout } = process;
  if (!stdout.isTTY) {
    err('dbproxy top: needs a terminal; use `dbproxy status --json` in scripts');
    return 2;
  }
  const api = new ApiClient({ url: command.url, token: command.token, timeoutMs: Math.min(command.requestTimeoutMs, Math.max(command.intervalMs, 1000)) });
  let current: TopSample | undefined;
  let previous: TopSample | undefined;
  let problem: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finish = resolve));

  const draw = () => {
    const screen = { width: stdout.columns || 80, height: stdout.rows || 24 };
    const lines = current ? renderTop(command.url, current, previous, screen, problem) : [`dbproxy top  ${command.url}  ${problem ?? 'connecting…'}`];
    stdout.write(`${HOME}${lines.map((l) => `${l}${CLEAR_LINE}`).join('\n')}${CLEAR_BELOW}`);
  };
  let stopped = false;
  const refresh = async () => {
    try {
      const sample = await takeSample(api);
      previous = current;
      current = sample;
      problem = undefined;
    } catch (e) {
      problem = errorMessage(e);
    }
    if (stopped) return;
    draw();
    timer = setTimeout(() => void refresh(), command.intervalMs);
  };
  const quit = (code: number) => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    if (stdin.isTTY) stdin.setRawMode(false);
    stdin.pause();
    stdout.write(LEAVE);
    finish(code);
  };
  const onKey = (data: Buffer) => {
    const key = data.toString();
    if (key === 'q' || key === 'Q' || key === CTRL_C) quit(0);
  };

  stdout.write(ENTER);
  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.on('data', onKey);
  stdin.resume();
  stdout.on('resize', draw);
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const onSignal = () => quit(0);
  for (const s of signals) process.on(s, onSignal);
  void refresh();
  const code = await done;
  for (const s of signals) process.off(s, onSignal);
  stdin.off('data', onKey);
  stdout.off('resize', draw);
  return code;
}
