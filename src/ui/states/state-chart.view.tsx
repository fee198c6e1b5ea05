/** @jsxImportSource hono/jsx */
/**
 * A resource-count chart drawn on the server as inline SVG: no script, no external resource (the CSP allows
 * neither). It scales to its container through its viewBox; the same numbers are in a visually hidden table for
 * screen readers, and the title and description summarise them.
 */

export interface ChartPoint {
  id: string;
  serial: number;
  createdAt: string;
  count: number;
}

const W = 600;
const H = 200;
const PAD = { left: 44, right: 16, top: 14, bottom: 34 };

/** The y axis' top: the highest count rounded up to a readable step (at least 1, so a flat zero line still draws). */
export function axisTop(max: number): number {
  if (max <= 5) return Math.max(1, max);
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * step >= max) return m * step;
  return 10 * step;
}

/** Where each point goes, oldest first (left) to newest (right). */
export function layout(points: ChartPoint[]): Array<ChartPoint & { x: number; y: number }> {
  const top = axisTop(Math.max(0, ...points.map((p) => p.count)));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  return points.map((p, i) => ({
    ...p,
    x: Math.round((PAD.left + (points.length === 1 ? innerW / 2 : (innerW * i) / (points.length - 1))) * 10) / 10,
    y: Math.round((PAD.top + innerH - (innerH * p.count) / top) * 10) / 10,
  }));
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** One sentence a screen reader can take in: the range of versions, where the count started and ended, its highest. */
export function summary(points: ChartPoint[]): string {
  if (!points.length) return "No state versions with a known resource count.";
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const max = Math.max(...points.map((p) => p.count));
  return (
    `Resource count over ${plural(points.length, "state version", "state versions")}, serial ${first.serial} to ${last.serial}: ` +
    `${plural(first.count, "resource", "resources")} at first, ${last.count} now, ${max} at most.`
  );
}

/** `points`: oldest first. */
export function ResourceChart(props: { points: ChartPoint[]; id?: string }) {
  const id = props.id ?? "resource-chart";
  const placed = layout(props.points);
  if (!placed.length) return <p class="muted">No state version has a known resource count yet.</p>;
  const top = axisTop(Math.max(0, ...props.points.map((p) => p.count)));
  const baseline = H - PAD.bottom;
  const first = placed[0]!;
  const last = placed[placed.length - 1]!;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-labelledby={`${id}-title ${id}-desc`} id={id} focusable="false">
        <title id={`${id}-title`}>Resource count by state version</title>
        <desc id={`${id}-desc`}>{summary(props.points)}</desc>
        <line class="axis" x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={baseline} />
        <line class="axis" x1={PAD.left} y1={baseline} x2={W - PAD.right} y2={baseline} />
        <line class="grid" x1={PAD.left} y1={PAD.top} x2={W - PAD.right} y2={PAD.top} />
        <text class="label" x={PAD.left - 6} y={PAD.top + 5} text-anchor="end">
          {top}
        </text>
        <text class="label" x={PAD.left - 6} y={baseline + 5} text-anchor="end">
          0
        </text>
        <text class="label" x={first.x} y={H - 10} text-anchor={placed.length === 1 ? "middle" : "start"}>
          {`serial ${first.serial}`}
        </text>
        {placed.length > 1 ? (
          <text class="label" x={last.x} y={H - 10} text-anchor="end">
            {`serial ${last.serial}`}
          </text>
        ) : null}
        <polyline class="line" fill="none" points={placed.map((p) => `${p.x},${p.y}`).join(" ")} />
        {placed.map((p) => (
          <circle class="point" cx={p.x} cy={p.y} r="4" data-serial={p.serial} data-count={p.count} data-state-version={p.id}>
            <title>{`Serial ${p.serial}: ${plural(p.count, "resource", "resources")}`}</title>
          </circle>
        ))}
      </svg>
      <table class="sr-only">
        <caption>Resource count by state version, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Serial</th>
            <th scope="col">Created</th>
            <th scope="col">Resources</th>
          </tr>
        </thead>
        <tbody>
          {props.points.map((p) => (
            <tr>
              <td>{p.serial}</td>
              <td>{p.createdAt}</td>
              <td>{p.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
