// [[mysql.fanout]] validation: best_effort accepted with its defaults; targets, names, table syntax
// and bounds checked; mode = "xa" accepted only with [mysql.xa] enabled = true.
import { formatIssue, parseToml, validateDocument } from './index';

const BACKENDS = `
[[mysql_backends]]
name = "p0"
address = "h0:3306"
role = "primary"
[[mysql_backends]]
name = "p1"
address = "h1:3306"
role = "primary"
shard = "s1"
`;

function check(fanouts: string): { issues: string[]; fanout?: unknown } {
  const parsed = parseToml(BACKENDS + fanouts);
  if (!parsed.ok) return { issues: parsed.issues.map(formatIssue) };
  const result = validateDocument(parsed.document, {});
  return result.ok ? { issues: [], fanout: result.config.mysql.fanout } : { issues: result.issues.map(formatIssue) };
}

describe('[[mysql.fanout]]', () => {
  it('accepts mode = "best_effort" and fills the defaults', () => {
    expect(check('[[mysql.fanout]]\nname = "audit"\ntable = "appdb.audit_log"\ntargets = ["s1"]\nmode = "best_effort"\n')).toEqual({
      issues: [],
      fanout: [{ name: 'audit', table: 'appdb.audit_log', targets: ['s1'], mode: 'best_effort', concurrency: 4, timeout_seconds: 10, max_transaction_bytes: 8388608 }],
    });
  });

  it('accepts mode = "xa" with [mysql.xa] enabled = true and refuses it without', () => {
    const xa = '[[mysql.fanout]]\nname = "audit"\ntable = "appdb.audit_log"\ntargets = ["s1"]\nmode = "xa"\n';
    expect(check(`${xa}[mysql.xa]\nenabled = true\n`).issues).toEqual([]);
    expect(check(xa).issues).toEqual([
      'mysql.fanout[0].mode: mode = "xa" needs [mysql.xa] enabled = true (and the xa-coordinator service running): without it every statement on the table would be refused',
    ]);
  });

  it('checks targets, names, the table and the bounds', () => {
    const toml = `
[[mysql.fanout]]
name = "a"
table = "audit log"
targets = ["s1", "nowhere", "s1"]
concurrency = 0
[[mysql.fanout]]
name = "a"
table = "x.y.z"
targets = []
timeout_seconds = 0
max_transaction_bytes = 0
`;
    expect(check(toml).issues).toEqual([
      'mysql.fanout[0].table: expected table or schema.table',
      'mysql.fanout[0].concurrency: must be at least 1',
      'mysql.fanout[1].table: expected table or schema.table',
      'mysql.fanout[1].targets: needs at least one target shard',
      'mysql.fanout[1].timeout_seconds: must be greater than 0',
      'mysql.fanout[1].max_transaction_bytes: must be at least 1',
    ]);
    expect(check('[[mysql.fanout]]\nname = "a"\ntable = "t"\ntargets = ["s1", "nowhere", "s1"]\n[[mysql.fanout]]\nname = "a"\ntable = "t"\ntargets = ["default"]\n').issues).toEqual([
      'mysql.fanout[0].targets[1]: shard "nowhere" has no backends in mysql_backends',
      'mysql.fanout[0].targets[2]: shard "s1" is listed twice',
      'mysql.fanout[1].name: duplicate fanout name "a" (also mysql.fanout[0])',
    ]);
  });
});
