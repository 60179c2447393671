// Which reads concatenation across shards answers, and which need a merge (refused).
import { crossShardMergeProblem } from './cross-shard-merge';

describe('crossShardMergeProblem', () => {
  it.each([
    ['select id from orders order by id', 'ORDER BY'],
    ['select id from orders limit ?', 'LIMIT'],
    ['select note, count(*) from orders group by note', 'GROUP BY'],
    ['select count(*) from orders', 'an aggregate'],
    ['select sum(total) from orders where customer_id > ?', 'an aggregate'],
    ['select distinct note from orders', 'DISTINCT'],
    ['select id from orders union select id from archive', 'a set operation'],
    ['select id, row_number() over (partition by note) from orders', 'a window function'],
  ])('%s needs %s', (text, what) => expect(crossShardMergeProblem(text)).toBe(what));

  it('lets plain filters through', () => {
    expect(crossShardMergeProblem('select id, note from orders where customer_id > ?')).toBeUndefined();
    expect(crossShardMergeProblem('select id from orders where customer_id in (?+)')).toBeUndefined();
  });
});
