import { validateDocument, type DbproxyConfig } from '@dbproxy/config';
import { configuredTargets } from './targets';

function configOf(doc: Record<string, unknown>): DbproxyConfig {
  const result = validateDocument(doc, {});
  if (!result.ok) throw new Error(result.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
  return result.config;
}

const backend = (name: string, role: string, extra: Record<string, unknown> = {}) => ({ name, address: '127.0.0.1:3306', role, username: 'app', password: 'app-pw', ...extra });

describe('MySQL monitor credentials', () => {
  it("use the backend's monitor user, else [mysql]'s, else the pool account", () => {
    const config = configOf({
      mysql: { monitor_username: 'mon', monitor_password: 'mon-pw' },
      mysql_backends: [backend('a', 'primary', { monitor_username: 'own', monitor_password: 'own-pw' }), backend('b', 'replica')],
    });
    expect(configuredTargets(config, 'mysql').map((t) => [t.name, t.credentials])).toEqual([
      ['a', { username: 'own', password: 'own-pw' }],
      ['b', { username: 'mon', password: 'mon-pw' }],
    ]);
    const plain = configOf({ mysql_backends: [backend('a', 'primary')] });
    expect(configuredTargets(plain, 'mysql')[0]?.credentials).toEqual({ username: 'app', password: 'app-pw' });
  });

  it('refuse a monitor_password without its monitor_username', () => {
    const result = validateDocument({ mysql: { monitor_password: 'x' }, mysql_backends: [backend('a', 'primary', { monitor_password: 'y' })] }, {});
    expect(result.ok ? [] : result.issues.map((i) => i.path)).toEqual(['mysql.monitor_password', 'mysql_backends[0].monitor_password']);
  });
});
