import { encodeValue } from './encoder';
import { aggregateElements, readIntegerReply } from './reply-elements';
import { ReplyScanner } from './reply-scanner';
import { RespWriter } from './writer';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

describe('readIntegerReply', () => {
  it('reads integer replies in place for summing fan-out counts', () => {
    const buf = b('+OK\r\n:42\r\n:-7\r\n');
    expect(readIntegerReply(buf, 5, 10)).toBe(42);
    expect(readIntegerReply(buf, 10, 15)).toBe(-7);
    expect(readIntegerReply(buf, 0, 5)).toBeNaN();
  });
});

describe('aggregateElements', () => {
  it('slices an MGET reply into element frames that can be re-framed without decoding', () => {
    const scanner = new ReplyScanner();
    const part1 = b('*2\r\n$1\r\na\r\n$-1\r\n');
    const part2 = b('*1\r\n|1\r\n+ttl\r\n:1\r\n$2\r\nbb\r\n');
    const e1 = aggregateElements(part1, 0, part1.length, scanner);
    expect([e1.count, e1.frame(0).toString(), e1.frame(1).toString(), e1.isNull(1)]).toEqual([2, '$1\r\na\r\n', '$-1\r\n', true]);
    const writer = new RespWriter().arrayHeader(3);
    for (let i = 0; i < e1.count; i++) writer.raw(e1.frame(i));
    const e2 = aggregateElements(part2, 0, part2.length, scanner);
    expect(e2.count).toBe(1);
    writer.raw(e2.frame(0));
    expect(writer.flush().toString()).toBe('*3\r\n$1\r\na\r\n$-1\r\n|1\r\n+ttl\r\n:1\r\n$2\r\nbb\r\n');
  });

  it('yields keys and values of a map, and nothing for nulls and scalars', () => {
    const scanner = new ReplyScanner();
    const map = encodeValue({ type: 'map', entries: [[{ type: 'simple', value: 'k' }, { type: 'integer', value: 1 }]] });
    expect(aggregateElements(map, 0, map.length, scanner).count).toBe(2);
    expect(aggregateElements(b('*-1\r\n'), 0, 5, scanner).count).toBe(0);
    expect(aggregateElements(b('*0\r\n'), 0, 4, scanner).count).toBe(0);
    expect(aggregateElements(b(':1\r\n'), 0, 4, scanner).count).toBe(0);
  });

  it('rejects a frame whose element count does not match its header', () => {
    const scanner = new ReplyScanner();
    expect(() => aggregateElements(b('*2\r\n:1\r\n'), 0, 8, scanner)).toThrow(expect.objectContaining({ code: 'DBP_ERR_RESP_INCOMPLETE_REPLY' }));
    expect(() => aggregateElements(b('*1\r\n:1\r\n:2\r\n'), 0, 12, scanner)).toThrow(expect.objectContaining({ code: 'DBP_ERR_RESP_TRAILING_BYTES' }));
  });
});
