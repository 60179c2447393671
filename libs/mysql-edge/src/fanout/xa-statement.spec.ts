// Parameters of a COM_STMT_EXECUTE inlined for the xa-coordinator: every value a literal that the
// server cannot read as SQL, placeholders inside strings, identifiers and comments left alone.
import { inlineParameters, sqlLiteral } from './xa-statement';

describe('sqlLiteral', () => {
  it('writes numbers as numbers and strings and bytes as hex literals with an introducer', () => {
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral(42)).toBe('42');
    expect(sqlLiteral(-1.5)).toBe('-1.5');
    expect(sqlLiteral(12345678901234567890n)).toBe('12345678901234567890');
    expect(sqlLiteral("a'b")).toBe("_utf8mb4 X'612762'");
    expect(sqlLiteral('')).toBe("''");
    expect(sqlLiteral(Buffer.from([0, 255]))).toBe("_binary X'00ff'");
    expect(sqlLiteral(Number.NaN)).toBeNull();
  });

  it('writes temporals quoted', () => {
    expect(sqlLiteral({ kind: 'date', year: 2026, month: 1, day: 2 })).toBe("'2026-01-02'");
    expect(sqlLiteral({ kind: 'datetime', year: 2026, month: 12, day: 2, hour: 1, minute: 2, second: 3, microsecond: 4 })).toBe("'2026-12-02 01:02:03.000004'");
    expect(sqlLiteral({ kind: 'datetime', year: 2026, month: 12, day: 2, hour: 1, minute: 2, second: 3, microsecond: 0 })).toBe("'2026-12-02 01:02:03'");
    expect(sqlLiteral({ kind: 'time', negative: true, days: 1, hours: 2, minutes: 3, seconds: 4, microseconds: 0 })).toBe("'-26:03:04'");
  });
});

describe('inlineParameters', () => {
  it('replaces placeholders only, in order', () => {
    expect(inlineParameters("INSERT INTO d.t /* ? */ (`a?`, b) VALUES (?, ?) -- '?'\n", [1, 'x'])).toEqual({ sql: "INSERT INTO d.t /* ? */ (`a?`, b) VALUES (1, _utf8mb4 X'78') -- '?'\n" });
    expect(inlineParameters("UPDATE d.t SET v = '?' WHERE id = ?", [7])).toEqual({ sql: "UPDATE d.t SET v = '?' WHERE id = 7" });
  });

  it('refuses a count mismatch and values without a literal', () => {
    expect(inlineParameters('INSERT INTO d.t VALUES (?, ?)', [1])).toEqual({ refused: expect.stringContaining('more placeholders than its 1 parameters') });
    expect(inlineParameters('INSERT INTO d.t VALUES (?)', [1, 2])).toEqual({ refused: expect.stringContaining('1 placeholders for 2') });
    expect(inlineParameters('INSERT INTO d.t VALUES (?)', [Number.POSITIVE_INFINITY])).toEqual({ refused: expect.stringContaining('parameter 1') });
  });
});
