// The dataset_report chart (src/report.ts) is an SVG string built in the Worker: axes, ticks, counts and titles.
// A pure function, checked here without the server.
import { describe, expect, it } from "vitest";
import type { ColumnStats } from "../src/csv.js";
import { countTicks, renderSvg } from "../src/report.js";

const stats: ColumnStats = {
  column: "temperature",
  count: 23,
  min: 0,
  max: 10,
  mean: 4.2,
  histogram: [3, 7, 0, 1, 2, 4, 2, 1, 2, 1].map((count, i) => ({ from: i, to: i + 1, count })),
};

const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);

describe("dataset_report chart", () => {
  it("has a title, both axis titles, y ticks up to the peak, x ticks at the bin edges, and each bar's count", () => {
    const svg = renderSvg("Weather <2026>", stats);
    expect(svg).toMatch(/^<svg [^>]*role="img"[^>]*>/);
    const labels = texts(svg);
    expect(labels[0]).toBe("Weather &#60;2026&#62;: temperature");
    expect(labels).toContain("Rows (count)");
    expect(labels).toContain("temperature (bins of equal width)");
    // y ticks 0, 2, 4, 6, 8 (peak 7).
    for (const tick of ["0", "2", "4", "6", "8"]) expect(labels).toContain(tick);
    // x ticks: the 11 bin edges 0..10.
    for (let edge = 0; edge <= 10; edge++) expect(labels).toContain(String(edge));
    // One bar per bin, each with its count as a tooltip and a label.
    expect(svg.match(/<rect x=/g)).toHaveLength(10);
    expect(svg).toContain("<title>1–2: 7</title>");
    // Two axis lines, and grid lines at the ticks.
    expect(svg.match(/stroke="#475467"\/>/g)!.length).toBeGreaterThanOrEqual(2 + 11);
  });

  it("picks round tick steps", () => {
    expect(countTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(countTicks(1)).toEqual([0, 1]);
    expect(countTicks(23)).toEqual([0, 5, 10, 15, 20, 25]);
    expect(countTicks(1000)).toEqual([0, 200, 400, 600, 800, 1000]);
  });
});
