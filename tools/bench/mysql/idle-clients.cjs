// Opens COUNT idle, authenticated MySQL client connections to PORT (mysql2), says "ready", and holds
// them until stdin closes: node idle-clients.cjs PORT USER PASSWORD COUNT
'use strict';
const mysql = require('mysql2');

const [port, user, password, count] = process.argv.slice(2);
const clients = [];

function open() {
  return new Promise((resolve, reject) => {
    const c = mysql.createConnection({ host: '127.0.0.1', port: Number(port), user, password });
    c.on('error', () => undefined);
    c.connect((err) => (err ? reject(err) : resolve(c)));
  });
}

async function main() {
  const total = Number(count);
  for (let i = 0; i < total; i += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, total - i) }, open));
    clients.push(...batch);
  }
  process.stdout.write(`ready ${clients.length}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    for (const c of clients) c.destroy();
    process.exit(0);
  });
}

main().catch((err) => {
  process.stdout.write(`failed ${err.message}\n`);
  process.exit(1);
});
