// PgBouncer's configuration for the pg benches: transaction pooling of one database on the bench's
// PostgreSQL, clients authenticated with SCRAM-SHA-256 against the same password pg-edge's
// [[users]] holds (as each is deployed; with trust, PgBouncer's CPU left out the clients' SCRAM
// exchanges that pg-edge's includes), files owned by the postgres user (PgBouncer will not run as root).
'use strict';
const { execFileSync } = require('node:child_process');
const { writeFileSync, chownSync } = require('node:fs');
const { join } = require('node:path');

/** The postgres user's uid and gid, which PgBouncer runs as. */
function postgresIds() {
  return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) };
}

/**
 * Writes pgbouncer.ini and userlist.txt into `dir` (chowned to postgres) and returns the ini's path.
 * `defaultPoolSize` undefined: PgBouncer's own default.
 */
function writePgbouncerConfig(dir, { pgPort, port, database = 'bench', password, defaultPoolSize }) {
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'userlist.txt'), `"postgres" "${password}"\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `${database} = host=127.0.0.1 port=${pgPort} dbname=${database} user=postgres`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      ...(defaultPoolSize === undefined ? [] : [`default_pool_size = ${defaultPoolSize}`]),
      'max_client_conn = 5000',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const { uid, gid } = postgresIds();
  for (const f of ['pgbouncer.ini', 'userlist.txt']) chownSync(join(dir, f), uid, gid);
  chownSync(dir, uid, gid);
  return ini;
}

module.exports = { postgresIds, writePgbouncerConfig };
