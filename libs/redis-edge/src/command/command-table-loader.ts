// Reads COMMAND (INFO of every command) and COMMAND DOCS from the first backend that answers,
// so key positions and policies come from the server the proxy fronts.
import { decodeReply, encodeCommand, parseCommandDocs, parseCommandInfo, type CommandDoc, type RespValue } from '@dbproxy/resp';
import { errorMessage } from '@dbproxy/util';
import { RedisEdgeErrors } from '../errors';
import { DEFAULT_STATE, type NodeEndpoint } from '../io/endpoint';
import type { ReplySink } from '../io/reply-sink';
import { buildCommandTable, type CommandTable } from './command-table';
import type { LinkDirectory } from './link-directory';

const COMMAND = encodeCommand(['COMMAND']);
const COMMAND_DOCS = encodeCommand(['COMMAND', 'DOCS']);

function fetchReplies(links: LinkDirectory, endpoint: NodeEndpoint, timeoutMs: number): Promise<[RespValue, RespValue]> {
  return new Promise((resolve, reject) => {
    const link = links.open(endpoint, DEFAULT_STATE);
    const replies: RespValue[] = [];
    const timer = setTimeout(() => link.close(RedisEdgeErrors.backendTimeout(endpoint.address, timeoutMs / 1000), 'timeout'), timeoutMs);
    const sink: ReplySink = {
      deliver(_seq, part, buf, start, end) {
        replies[part] = decodeReply(buf, start, end);
        if (replies[0] === undefined || replies[1] === undefined) return;
        clearTimeout(timer);
        link.close(RedisEdgeErrors.backendLost(endpoint.address, 'command table read'), 'done');
        resolve([replies[0], replies[1]]);
      },
      fail(_seq, _part, err) {
        clearTimeout(timer);
        reject(err);
      },
      redirect: () => false,
    };
    link.send(sink, 0, 0, 0, 0, COMMAND, 0, COMMAND.length);
    link.send(sink, 0, 1, 0, 0, COMMAND_DOCS, 0, COMMAND_DOCS.length);
  });
}

/** The command table of the first of `endpoints` that answers COMMAND. */
export async function loadCommandTable(links: LinkDirectory, endpoints: readonly NodeEndpoint[], timeoutMs: number): Promise<CommandTable> {
  const failures: string[] = [];
  for (const endpoint of endpoints) {
    try {
      const [info, docs] = await fetchReplies(links, endpoint, timeoutMs);
      if (info.type === 'error') throw new Error(info.message);
      // Servers before Redis 7 have no COMMAND DOCS (key positions then come from first/last/step).
      const docMap: Map<string, CommandDoc> = docs.type === 'error' ? new Map() : parseCommandDocs(docs);
      return buildCommandTable(parseCommandInfo(info), docMap);
    } catch (err) {
      failures.push(`${endpoint.address}: ${errorMessage(err)}`);
    }
  }
  throw RedisEdgeErrors.commandTable(endpoints.map((e) => e.address).join(', ') || 'no backend', failures.join('; ') || 'no backend configured');
}
