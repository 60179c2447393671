// Opens many idle PostgreSQL client connections (node-postgres) and closes them, for the memory figure.
'use strict';
const { Client } = require('pg');

class IdleClients {
  constructor(port, user, password) {
    this.port = port;
    this.user = user;
    this.password = password;
    this.clients = [];
  }

  async open(count) {
    for (let i = 0; i < count; i += 50) {
      const batch = Array.from({ length: Math.min(50, count - i) }, () => new Client({ host: '127.0.0.1', port: this.port, user: this.user, password: this.password, database: 'bench' }));
      for (const c of batch) c.on('error', () => undefined);
      await Promise.all(batch.map((c) => c.connect()));
      await Promise.all(batch.map((c) => c.query('SELECT 1')));
      this.clients.push(...batch);
    }
  }

  async close() {
    await Promise.all(this.clients.map((c) => c.end().catch(() => undefined)));
    this.clients = [];
  }
}

module.exports = { IdleClients };
