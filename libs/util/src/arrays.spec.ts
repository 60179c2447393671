import { emptyArray } from './arrays';

describe('emptyArray', () => {
  it('empties short and long arrays in place, and leaves an empty one as it is', () => {
    for (const n of [0, 1, 3, 16, 17, 1000]) {
      const array = Array.from({ length: n }, (_, i) => i);
      const same = array;
      emptyArray(array);
      expect(array).toBe(same);
      expect(array).toEqual([]);
      array.push(7);
      expect(array).toEqual([7]);
    }
  });
});
