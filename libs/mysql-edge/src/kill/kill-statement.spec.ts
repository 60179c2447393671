// KILL statements as the edge reads them: every form MariaDB and MySQL clients send, and the refused ones.
import { batchMentionsKill, parseKill, startsWithKill } from './kill-statement';

describe('parseKill', () => {
  it.each([
    ['KILL 5', 'connection', 5],
    ['kill connection 5;', 'connection', 5],
    ['KILL QUERY 1073741825', 'query', 1073741825],
    ['KILL /*!50000 QUERY */ 12', 'query', 12], // libmysqlclient's Ctrl-C
    ['KILL HARD QUERY 7', 'query', 7],
    ['KILL SOFT CONNECTION 7', 'connection', 7],
    ['/* app */ KILL -- why\n QUERY # more\n 9', 'query', 9],
  ])('%j → %s %d', (sql, scope, id) => {
    expect(parseKill(sql)).toEqual({ kind: 'kill', scope, id });
  });

  it.each([
    ['KILL QUERY ID 5', 'KILL QUERY ID'],
    ['KILL USER app', 'KILL USER'],
    ['KILL HARD USER app', 'KILL USER'],
    ['KILL CONNECTION_ID()', 'KILL with anything but a connection id'],
    ['KILL 5 + 1', 'KILL with anything but a connection id'],
    ['KILL 99999999999', 'KILL with anything but a connection id'],
  ])('refuses %j', (sql, form) => {
    expect(parseKill(sql)).toEqual({ kind: 'refused', form });
  });

  it('knows a prepared KILL', () => {
    expect(startsWithKill(' /* x */ KILL 5')).toBe(true);
    expect(startsWithKill('SELECT kill FROM t')).toBe(false);
  });

  it.each([
    ['KILL 5; SELECT 1', true],
    ['SELECT 1; kill query 7', true],
    ['SELECT 1; /*!50000 KILL */ 5', true],
    ["SELECT 1; SELECT 'unterminated", true],
    ['INSERT INTO skills VALUES (1); SELECT 1', false],
    ["INSERT INTO t VALUES ('kill'); SELECT `kill` FROM t", false],
    ['SELECT 1; /* kill */ SELECT 2', false],
  ])('a batch %j names KILL: %p', (sql, named) => {
    expect(batchMentionsKill(sql)).toBe(named);
  });
});
