// Every pool error code is unique and documented once in the README's Errors table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PoolErrors } from './errors';
import { isLegalTransition, type ConnectionState } from './pooled-connection';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');

describe('pool errors', () => {
  it('documents every error code in the README Errors table, each once', () => {
    const codes = Object.values(PoolErrors).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(readme.match(new RegExp(`^\\| \`${code}\` \\|`, 'gm'))).toHaveLength(1);
  });

  it('documents exactly the legal state moves in the README transitions table', () => {
    const states: ConnectionState[] = ['creating', 'idle', 'in_use', 'resetting', 'retiring', 'closed'];
    const documented = [...readme.matchAll(/^\| (\w+) \| (\w+) \| .* \|$/gm)]
      .map((m) => [m[1], m[2]])
      .filter(([from, to]) => states.includes(from as ConnectionState) && states.includes(to as ConnectionState));
    const legal = states.flatMap((from) => states.filter((to) => isLegalTransition(from, to)).map((to) => [from, to]));
    expect(documented.sort()).toEqual(legal.sort());
  });
});
