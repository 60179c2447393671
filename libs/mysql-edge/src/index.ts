// Public entry point of mysql-edge: the MySQL data path (protocol termination, authentication,
// pooled read/write split with transaction and session affinity) as a runtime service.
export { mysqlEdgeService } from './service';
export { MysqlEdgeErrors, toMysqlError, type MysqlError } from './errors';
