/** The database commands the edge sent, from its `/metrics`: the bench's commands per request. */

/** The edge's `db_command_duration_seconds` sums and counts, by `collection.command` → [count, total ms]. */
export async function edgeDbTimes(base: string, metricsToken: string): Promise<Map<string, [number, number]>> {
  const out = new Map<string, [number, number]>();
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  for (const m of text.matchAll(
    /^db_command_duration_seconds_(sum|count)\{collection="([^"]*)",command="([^"]*)",ok="[^"]*"\} (\S+)$/gm,
  )) {
    const key = `${m[2]}.${m[3]}`;
    const v = out.get(key) ?? [0, 0];
    if (m[1] === 'count') v[0] += Number(m[4]);
    else v[1] += Number(m[4]) * 1000;
    out.set(key, v);
  }
  return out;
}

/** Commands sent between two readings, per request, and the most frequent of them. */
export function commandsBetween(
  before: Map<string, [number, number]>,
  after: Map<string, [number, number]>,
  requests: number,
): { perRequest: number; top: string } {
  let n = 0;
  const by: [string, number][] = [];
  for (const [k, [c]] of after) {
    const d = c - (before.get(k)?.[0] ?? 0);
    if (d <= 0) continue;
    n += d;
    by.push([k, d]);
  }
  const top = by
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([k, d]) => `${k} ${(d / requests).toFixed(2)}`)
    .join(', ');
  return { perRequest: n / Math.max(1, requests), top };
}
