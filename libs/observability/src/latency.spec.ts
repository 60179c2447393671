import { AggregatorRegistry } from 'prom-client';
import { EdgeLatency } from './latency';
import { MetricsRegistry } from './metrics';

const line = (text: string, prefix: string): string | undefined => text.split('\n').find((l) => l.startsWith(prefix));

describe('EdgeLatency', () => {
  it('exposes each series at zero once made, then cumulative buckets, sum and count', async () => {
    const metrics = new MetricsRegistry();
    const latency = new EdgeLatency(metrics, 'mysql');
    const series = latency.series('read_write', 'primary', 'db1');
    expect(latency.series('read_write', 'primary', 'db1')).toBe(series);
    let text = (await metrics.exposition()).body;
    expect(line(text, 'dbproxy_statement_duration_seconds_count{edge="mysql",listener="read_write",route="primary",backend="db1"}')).toMatch(/ 0$/);
    series.statement.observe(0.00004);
    series.statement.observe(0.0003);
    series.statement.observe(20);
    series.poolWait.observe(0);
    text = (await metrics.exposition()).body;
    const labels = 'edge="mysql",listener="read_write",route="primary",backend="db1"';
    expect(line(text, `dbproxy_statement_duration_seconds_bucket{le="0.00005",${labels}}`)).toMatch(/ 1$/);
    expect(line(text, `dbproxy_statement_duration_seconds_bucket{le="0.0005",${labels}}`)).toMatch(/ 2$/);
    expect(line(text, `dbproxy_statement_duration_seconds_bucket{le="10",${labels}}`)).toMatch(/ 2$/);
    expect(line(text, `dbproxy_statement_duration_seconds_bucket{le="+Inf",${labels}}`)).toMatch(/ 3$/);
    expect(line(text, `dbproxy_statement_duration_seconds_count{${labels}}`)).toMatch(/ 3$/);
    expect(Number(line(text, `dbproxy_statement_duration_seconds_sum{${labels}}`)?.split(' ')[1])).toBeCloseTo(20.00034, 6);
    expect(line(text, `dbproxy_pool_wait_seconds_bucket{le="0.00005",${labels}}`)).toMatch(/ 1$/);
  });

  it('shares the histograms between edges of one registry and survives a reset', async () => {
    const metrics = new MetricsRegistry();
    new EdgeLatency(metrics, 'mysql').series('rw', 'primary', 'a').backend.observe(0.001);
    new EdgeLatency(metrics, 'postgres').series('rw', 'primary', 'b').backend.observe(0.002);
    metrics.registry.resetMetrics();
    const text = (await metrics.exposition()).body;
    expect(line(text, 'dbproxy_backend_duration_seconds_count{edge="mysql",listener="rw",route="primary",backend="a"}')).toMatch(/ 1$/);
    expect(line(text, 'dbproxy_backend_duration_seconds_count{edge="postgres",listener="rw",route="primary",backend="b"}')).toMatch(/ 1$/);
  });

  it('sums over processes like prom-client histograms (worker aggregation)', async () => {
    const parts = await Promise.all(
      [1, 2].map(async (n) => {
        const metrics = new MetricsRegistry();
        const cell = new EdgeLatency(metrics, 'redis').series('rw', 'read', 'r1').statement;
        for (let i = 0; i < n; i++) cell.observe(0.0002);
        return metrics.registry.getMetricsAsJSON();
      }),
    );
    const text = await AggregatorRegistry.aggregate(parts).metrics();
    expect(line(text, 'dbproxy_statement_duration_seconds_count{edge="redis",listener="rw",route="read",backend="r1"}')).toMatch(/ 3$/);
  });
});
