// The dbproxy command: the all-in-one launcher (`start` with no service runs them all in one
// process), `validate`, the xa-coordinator's operator commands (`xa`) and the operator commands
// over config-api (status, sessions, pools, top, drain, undrain, pause, resume, kill).
import { runMain } from '@dbproxy/runtime';
import { parseArgs, USAGE } from './cli/args';
import { endQuietlyOnClosedPipe } from './cli/closed-pipe';
import { operatorCommand } from './cli/operator';
import { topCommand } from './cli/top';
import { validateCommand } from './cli/validate';
import { xaCommand } from './cli/xa';
import { resolveServices, SERVICES } from './services';
import { VERSION } from './version';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

async function main(argv: readonly string[]): Promise<void> {
  const command = parseArgs(argv);
  if (command.kind !== 'start' && command.kind !== 'worker') endQuietlyOnClosedPipe();
  switch (command.kind) {
    case 'help':
      out(USAGE);
      return;
    case 'usage':
      err(USAGE);
      process.exitCode = 2;
      return;
    case 'version':
      out(VERSION);
      return;
    case 'operator':
      if (command.verb === 'top') process.exit(await topCommand(command, err)); // an answer still in flight must not hold the exit
      process.exitCode = await operatorCommand(command, out, err);
      return;
    case 'error':
      err(`dbproxy: ${command.message}\n${USAGE}`);
      process.exitCode = 2;
      return;
    case 'validate':
      process.exitCode = validateCommand(command.configPath, out, err);
      return;
    case 'xa':
      process.exitCode = await xaCommand(command, out, err);
      return;
    case 'start':
    case 'worker': {
      const names = command.kind === 'start' ? command.services : [command.service];
      const resolved = resolveServices(names);
      if (!resolved.ok) {
        err(`dbproxy: unknown service(s) ${resolved.unknown.join(', ')}; this build has ${SERVICES.map((s) => s.name).join(', ')}`);
        process.exitCode = 2;
        return;
      }
      const { configPath } = command;
      await runMain({
        services: resolved.services,
        allInOne: command.kind === 'start' && names.length === 0,
        worker: command.kind === 'worker',
        workerLauncher: { modulePath: __filename, args: (service) => ['worker', service, '--config', configPath] },
        configPath,
        version: VERSION,
        report: err,
      });
    }
  }
}

void main(process.argv.slice(2));
