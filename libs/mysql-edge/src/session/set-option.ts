// COM_SET_OPTION, answered by the edge as the server does: MYSQL_OPTION_MULTI_STATEMENTS_ON (0) and
// _OFF (1) set or clear the session's CLIENT_MULTI_STATEMENTS (PHP's mysqli::multi_query, libmysql's
// mysql_set_server_option), answered with EOF; any other option gets 1047 as from the server.
import { Capability, type MysqlPacket } from '@dbproxy/protocol-mysql';
import { MysqlEdgeErrors } from '../errors';
import { eofPacket } from '../wire';
import type { ClientSession } from './client-session';

const MULTI_STATEMENTS_ON = 0;
const MULTI_STATEMENTS_OFF = 1;

export function setOption(s: ClientSession, p: MysqlPacket): void {
  if (p.payload.length < 3) throw MysqlEdgeErrors.protocol('COM_SET_OPTION without an option');
  const option = p.payload.readUInt16LE(1);
  if (option === MULTI_STATEMENTS_ON) s.capabilities = (s.capabilities | Capability.MultiStatements) >>> 0;
  else if (option === MULTI_STATEMENTS_OFF) s.capabilities = (s.capabilities & ~Capability.MultiStatements) >>> 0;
  else return s.fail(MysqlEdgeErrors.unknownCommand('1b'));
  s.send(eofPacket(s.replySeq, s.status(), s.capabilities));
}
