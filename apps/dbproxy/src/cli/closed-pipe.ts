// A closed stdout pipe (`dbproxy status | head -1`) ends the command quietly: no stack trace.
export function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}
