import { isGreenOf } from './green-naming';

describe('isGreenOf', () => {
  const blue = 'orders.c1abc.eu-north-1.rds.amazonaws.com';
  it.each([
    ['orders-green-x1y2z3.c1abc.eu-north-1.rds.amazonaws.com', true],
    ['ORDERS-GREEN-X1Y2Z3.c1abc.eu-north-1.rds.amazonaws.com.', true],
    ['orders-green-x1y2z.c1abc.eu-north-1.rds.amazonaws.com', false],
    ['orders-green-x1y2z3.other.eu-north-1.rds.amazonaws.com', false],
    ['orders2-green-x1y2z3.c1abc.eu-north-1.rds.amazonaws.com', false],
    ['orders.c1abc.eu-north-1.rds.amazonaws.com', false],
    ['orders-r1-green-x1y2z3.c1abc.eu-north-1.rds.amazonaws.com', false],
  ])('%s -> %s', (green, expected) => {
    expect(isGreenOf(blue, green)).toBe(expected);
  });
});
