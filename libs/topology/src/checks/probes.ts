// The monitor connection for a backend of any protocol.
import type { BackendTarget } from '../targets';
import { MysqlProbe } from './mysql-probe';
import { PostgresProbe } from './postgres-probe';
import { RedisProbe } from './redis-probe';
import type { BackendProbe } from './types';

export function createProbe(target: BackendTarget, connectAddress: string): BackendProbe {
  switch (target.protocol) {
    case 'mysql':
      return new MysqlProbe(target, connectAddress);
    case 'postgres':
      return new PostgresProbe(target, connectAddress);
    case 'redis':
      return new RedisProbe(target, connectAddress);
  }
}
