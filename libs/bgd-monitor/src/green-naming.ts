// The RDS green-hostname naming relationship: the green instance of `orders.abc.eu-north-1.rds.amazonaws.com`
// is `orders-green-x1y2z3.abc.eu-north-1.rds.amazonaws.com` (the first label gains `-green-` and a
// six-character suffix; the rest of the name is the same).

const GREEN_SUFFIX = /^-green-[a-z0-9]{6}$/;

function labels(host: string): { first: string; rest: string } {
  const lower = host.toLowerCase().replace(/\.$/, '');
  const dot = lower.indexOf('.');
  return dot < 0 ? { first: lower, rest: '' } : { first: lower.slice(0, dot), rest: lower.slice(dot) };
}

/** True when `green` is the green counterpart of `blue` by RDS naming. */
export function isGreenOf(blue: string, green: string): boolean {
  const b = labels(blue);
  const g = labels(green);
  if (b.rest !== g.rest || !g.first.startsWith(b.first)) return false;
  return GREEN_SUFFIX.test(g.first.slice(b.first.length));
}
