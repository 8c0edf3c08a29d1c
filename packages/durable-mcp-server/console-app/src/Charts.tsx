// Per tool over time, from GET /operator/metrics: throughput (completed, failed, cancelled per bucket), duration p50
// and p95, failure rate. uPlot draws on a canvas; each chart has a text summary beside it for screen readers.
import { memo, useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import { api, formatDuration } from "./api.ts";

interface Series {
  completed: number[];
  failed: number[];
  cancelled: number[];
  p50Ms: Array<number | null>;
  p95Ms: Array<number | null>;
  failureRate: Array<number | null>;
}

interface Metrics {
  bucketMs: number;
  buckets: number[];
  tools: Record<string, Series>;
  rows: number;
  truncated: boolean;
  wholeFrom: string;
}

const MAX_TOOLS = 6;

/** The system's colour scheme, followed live: a canvas keeps the colours it was drawn with, so charts redraw. */
const DARK = matchMedia("(prefers-color-scheme: dark)");
function useScheme(): string {
  const [dark, setDark] = useState(DARK.matches);
  useEffect(() => {
    const changed = () => setDark(DARK.matches);
    DARK.addEventListener("change", changed);
    return () => DARK.removeEventListener("change", changed);
  }, []);
  return dark ? "dark" : "light";
}

function css(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
}

// Memoised: the fleet re-renders on every selection change; the charts only when their range or tool does.
export const Charts = memo(function Charts({ since, tool }: { since: string; tool: string | undefined }) {
  const [metrics, setMetrics] = useState<Metrics | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let stale = false;
    const query = new URLSearchParams({ since });
    if (tool) query.set("tool", tool);
    api<Metrics>(`/metrics?${query}`).then(
      (answer) => !stale && (setMetrics(answer), setError(undefined)),
      (failure: Error) => !stale && setError(failure.message),
    );
    return () => {
      stale = true;
    };
  }, [since, tool]);
  const tools = metrics ? Object.keys(metrics.tools).slice(0, MAX_TOOLS) : [];
  return (
    <section className="panel" aria-labelledby="charts-heading">
      <h2 id="charts-heading">Per tool over time</h2>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {metrics && (
        <p className="small muted">
          Finished tasks since {since} ago, in buckets of {formatDuration(metrics.bucketMs)} ({metrics.rows} tasks).
          {metrics.truncated && ` Only buckets from ${new Date(metrics.wholeFrom).toLocaleString()} on are whole.`}
          {metrics &&
            Object.keys(metrics.tools).length > MAX_TOOLS &&
            ` The first ${MAX_TOOLS} tools are shown: filter by tool for another.`}
        </p>
      )}
      {metrics && tools.length === 0 && <p>No task finished in this range.</p>}
      <div className="charts" data-testid="charts">
        {metrics &&
          tools.map((name) => (
            <div className="tool-charts" key={name} data-tool={name}>
              <h3>{name}</h3>
              <Chart
                label={`${name}: throughput`}
                x={metrics.buckets}
                series={[
                  { label: "completed", color: "--ok", values: metrics.tools[name]!.completed },
                  { label: "failed", color: "--bad", values: metrics.tools[name]!.failed },
                  { label: "cancelled", color: "--muted", values: metrics.tools[name]!.cancelled },
                ]}
                format={(v) => String(v)}
              />
              <Chart
                label={`${name}: duration`}
                x={metrics.buckets}
                series={[
                  { label: "p50", color: "--accent", values: metrics.tools[name]!.p50Ms },
                  { label: "p95", color: "--warn", values: metrics.tools[name]!.p95Ms },
                ]}
                format={formatDuration}
              />
              <Chart
                label={`${name}: failure rate`}
                x={metrics.buckets}
                series={[{ label: "failure rate", color: "--bad", values: metrics.tools[name]!.failureRate }]}
                format={(v) => `${Math.round(v * 100)}%`}
                top={1}
              />
            </div>
          ))}
      </div>
    </section>
  );
});

function Chart({
  label,
  x,
  series,
  format,
  top,
}: {
  top?: number;
  label: string;
  x: number[];
  series: Array<{ label: string; color: string; values: Array<number | null> }>;
  format: (value: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useScheme();
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(200, Math.floor(element.clientWidth));
    const axis = { stroke: css("--fg"), grid: { stroke: css("--grid"), width: 1 }, ticks: { stroke: css("--grid") } };
    const plot = new uPlot(
      {
        width: width(),
        height: 140,
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        // From 0, to the data's top (a rate to 100%): an all-zero series or one value would get a range around it.
        scales: {
          x: { time: true },
          y: { range: (_u: uPlot, _min: number, max: number) => [0, top ?? (max > 0 ? max * 1.1 : 1)] },
        },
        axes: [axis, { ...axis, size: 56, values: (_u: uPlot, ticks: number[]) => ticks.map(format) }],
        series: [
          {},
          ...series.map((s) => ({ label: s.label, stroke: css(s.color), width: 2, points: { show: x.length < 60 } })),
        ],
      },
      [x.map((ms) => ms / 1000), ...series.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 140 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [x, series, format, scheme, top]);
  const totals = series.map((s) => {
    const present = s.values.filter((v): v is number => v !== null);
    const last = present.at(-1);
    return `${s.label} latest ${last === undefined ? "none" : format(last)}`;
  });
  return (
    <figure className="chart">
      <figcaption className="small">{label}</figcaption>
      <div ref={box} role="img" aria-label={`${label}. ${totals.join("; ")}.`} />
    </figure>
  );
}
