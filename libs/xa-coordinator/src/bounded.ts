// Runs work over items with at most `limit` at a time; stops starting new items once `stop()` says so.

export async function forEachBounded<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>, stop: () => boolean = () => false): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && !stop()) {
      const index = next++;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
