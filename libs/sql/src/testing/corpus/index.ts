// Every corpus case, and the routers they are checked against.
import { SqlRouter } from '../../router';
import { GUI } from './gui';
import { LONG } from './long';
import { ORM } from './orm';
import { PGBENCH } from './pgbench';
import { SESSIONS } from './sessions';
import { SYSBENCH } from './sysbench';
import { TRICKY } from './tricky';
import { MYSQL_RULES, POSTGRES_RULES, type CorpusCase } from './types';

export * from './types';

export const CORPUS: readonly CorpusCase[] = [...SYSBENCH, ...PGBENCH, ...ORM, ...GUI, ...TRICKY, ...SESSIONS, ...LONG];

/** Routers configured like the corpus expects (multi_shard = all_shards). */
export function corpusRouters(cacheSize = 4096): { mysql: SqlRouter; postgresql: SqlRouter } {
  return {
    mysql: new SqlRouter({ dialect: 'mysql', shardRules: MYSQL_RULES, multiShard: 'all_shards', cacheSize }),
    postgresql: new SqlRouter({ dialect: 'postgresql', shardRules: POSTGRES_RULES, multiShard: 'all_shards', cacheSize }),
  };
}
