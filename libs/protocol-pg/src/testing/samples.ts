// Test support: one or more concrete samples of every frontend and backend message.
import { Buffer } from 'node:buffer';
import type { BackendMessage } from '../backend/messages';
import type { AuthResponseKind, FrontendTypedMessage, StartupPacket } from '../frontend/messages';

export const startupSamples: StartupPacket[] = [
  {
    type: 'StartupMessage',
    protocolVersion: 196608,
    parameters: new Map([
      ['user', 'alice'],
      ['database', 'app'],
      ['options', '-c dbproxy.shard=eu-1 -c search_path=a\\ b'],
      ['application_name', 'grüße ✓'],
    ]),
  },
  { type: 'StartupMessage', protocolVersion: 196610, parameters: new Map([['user', 'u'], ['_pq_.x', '1']]) },
  { type: 'SSLRequest' },
  { type: 'GSSENCRequest' },
  { type: 'CancelRequest', processId: 4242, secretKey: -123456789 },
];

export interface TypedSample {
  readonly message: FrontendTypedMessage;
  /** The auth state a server would be in to read this 'p' message. */
  readonly auth?: AuthResponseKind;
}

export const frontendSamples: TypedSample[] = [
  { message: { type: 'Query', sql: "SELECT 'ü', 1" } },
  { message: { type: 'Query', sql: '' } },
  { message: { type: 'Parse', statement: 's1', sql: 'SELECT $1::int4, $2', paramTypes: [23, 0, 3000000000] } },
  { message: { type: 'Parse', statement: '', sql: 'SELECT 1', paramTypes: [] } },
  {
    message: {
      type: 'Bind',
      portal: 'p1',
      statement: 's1',
      paramFormats: [0, 1, 1],
      params: [Buffer.from('42'), null, Buffer.alloc(0)],
      resultFormats: [1],
    },
  },
  { message: { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] } },
  { message: { type: 'Describe', kind: 'S', name: 's1' } },
  { message: { type: 'Describe', kind: 'P', name: '' } },
  { message: { type: 'Execute', portal: 'p1', maxRows: 100 } },
  { message: { type: 'Close', kind: 'P', name: 'p1' } },
  { message: { type: 'Close', kind: 'S', name: 's1' } },
  { message: { type: 'Sync' } },
  { message: { type: 'Flush' } },
  { message: { type: 'CopyData', data: Buffer.from('1\tx\n') } },
  { message: { type: 'CopyDone' } },
  { message: { type: 'CopyFail', message: 'client gave up' } },
  {
    message: {
      type: 'FunctionCall',
      functionOid: 1598,
      argFormats: [1],
      args: [Buffer.from([0, 0, 0, 7]), null],
      resultFormat: 1,
    },
  },
  { message: { type: 'PasswordMessage', password: 'md5a3556571e93b0d20722ba62be61e8c2d' }, auth: 'password' },
  { message: { type: 'SASLInitialResponse', mechanism: 'SCRAM-SHA-256', data: Buffer.from('n,,n=,r=abc') }, auth: 'sasl-initial' },
  { message: { type: 'SASLInitialResponse', mechanism: 'SCRAM-SHA-256', data: null }, auth: 'sasl-initial' },
  { message: { type: 'SASLResponse', data: Buffer.from('c=biws,r=abcdef,p=xyz') }, auth: 'sasl' },
  { message: { type: 'Terminate' } },
];

export const backendSamples: BackendMessage[] = [
  { type: 'AuthenticationOk' },
  { type: 'AuthenticationCleartextPassword' },
  { type: 'AuthenticationMD5Password', salt: Buffer.from([1, 2, 3, 4]) },
  { type: 'AuthenticationSASL', mechanisms: ['SCRAM-SHA-256-PLUS', 'SCRAM-SHA-256'] },
  { type: 'AuthenticationSASLContinue', data: Buffer.from('r=abc,s=c2FsdA==,i=4096') },
  { type: 'AuthenticationSASLFinal', data: Buffer.from('v=c2lnbmF0dXJl') },
  { type: 'BackendKeyData', processId: 777, secretKey: -1 },
  { type: 'ParameterStatus', name: 'server_version', value: '15.20' },
  { type: 'NegotiateProtocolVersion', newestMinorVersion: 0, unrecognizedOptions: ['_pq_.compression'] },
  { type: 'ReadyForQuery', status: 'I' },
  { type: 'ReadyForQuery', status: 'T' },
  { type: 'ReadyForQuery', status: 'E' },
  { type: 'ParseComplete' },
  { type: 'BindComplete' },
  { type: 'ParameterDescription', typeOids: [23, 25, 4000000000] },
  {
    type: 'RowDescription',
    fields: [
      { name: 'id', tableOid: 16384, columnAttr: 1, typeOid: 20, typeSize: 8, typeModifier: -1, format: 1 },
      { name: 'naïve', tableOid: 0, columnAttr: 0, typeOid: 1043, typeSize: -1, typeModifier: 36, format: 0 },
    ],
  },
  { type: 'RowDescription', fields: [] },
  { type: 'NoData' },
  { type: 'DataRow', values: [Buffer.from('1'), null, Buffer.alloc(0), Buffer.from([0xff, 0])] },
  { type: 'DataRow', values: [] },
  { type: 'PortalSuspended' },
  { type: 'CommandComplete', tag: 'SELECT 2' },
  { type: 'EmptyQueryResponse' },
  { type: 'CloseComplete' },
  { type: 'CopyInResponse', format: 0, columnFormats: [0, 0] },
  { type: 'CopyOutResponse', format: 1, columnFormats: [1] },
  { type: 'CopyBothResponse', format: 0, columnFormats: [] },
  { type: 'CopyData', data: Buffer.from('row\n') },
  { type: 'CopyDone' },
  {
    type: 'ErrorResponse',
    severity: 'ERROR',
    severityNonLocalized: 'ERROR',
    code: '23505',
    message: 'duplicate key value violates unique constraint "t_pkey"',
    detail: 'Key (id)=(1) already exists.',
    hint: 'h',
    position: '8',
    internalPosition: '2',
    internalQuery: 'q',
    where: 'w',
    schema: 'public',
    table: 't',
    column: 'id',
    dataType: 'int4',
    constraint: 't_pkey',
    file: 'nbtinsert.c',
    line: '664',
    routine: '_bt_check_unique',
  },
  { type: 'NoticeResponse', severity: 'NOTICE', code: '00000', message: 'table "x" does not exist, skipping' },
  { type: 'FunctionCallResponse', result: Buffer.from([0, 0, 0, 8]) },
  { type: 'FunctionCallResponse', result: null },
  { type: 'NotificationResponse', processId: 99, channel: 'jobs', payload: '{"id":1}' },
];
