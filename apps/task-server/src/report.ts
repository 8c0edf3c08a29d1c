import type { ColumnStats } from "./csv.js";

const round = (value: number) => Number(value.toPrecision(4));

/**
 * An SVG histogram of a column, drawn as a string (a Worker has no DOM): a title, a y axis of counts with "nice"
 * ticks and grid lines, an x axis with the bins' edges, each bar's count above it, and axis titles. Self-contained
 * (no fonts or scripts), readable on a light background wherever it is opened.
 */
export function renderSvg(title: string, stats: ColumnStats): string {
  const width = 720;
  const height = 420;
  const plot = { left: 64, right: width - 24, top: 64, bottom: height - 72 };
  const plotWidth = plot.right - plot.left;
  const plotHeight = plot.bottom - plot.top;
  const peak = Math.max(1, ...stats.histogram.map((bin) => bin.count));
  const ticks = countTicks(peak);
  const top = ticks[ticks.length - 1]!;
  const y = (count: number) => plot.bottom - (count / top) * plotHeight;
  const slot = plotWidth / stats.histogram.length;
  const parts: string[] = [];
  parts.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  parts.push(
    `<text x="${plot.left}" y="30" font-size="18" font-weight="600" fill="#1d2330">${escapeXml(title)}: ${escapeXml(stats.column)}</text>`,
    `<text x="${plot.left}" y="50" font-size="12" fill="#475467">Distribution of ${escapeXml(stats.column)}: ` +
      `n=${stats.count}, min ${round(stats.min)}, mean ${round(stats.mean)}, max ${round(stats.max)}</text>`,
  );
  for (const tick of ticks) {
    const ty = y(tick).toFixed(1);
    parts.push(
      `<line x1="${plot.left}" x2="${plot.right}" y1="${ty}" y2="${ty}" stroke="#e4e7ec"/>`,
      `<text x="${plot.left - 8}" y="${ty}" font-size="11" fill="#475467" text-anchor="end" dominant-baseline="middle">${tick}</text>`,
    );
  }
  stats.histogram.forEach((bin, i) => {
    const x = plot.left + i * slot;
    const barY = y(bin.count);
    const label = `${round(bin.from)}–${round(bin.to)}: ${bin.count}`;
    parts.push(
      `<rect x="${(x + 3).toFixed(1)}" y="${barY.toFixed(1)}" width="${(slot - 6).toFixed(1)}" height="${(plot.bottom - barY).toFixed(1)}" fill="#3b63d9"><title>${label}</title></rect>`,
      `<text x="${(x + slot / 2).toFixed(1)}" y="${(barY - 5).toFixed(1)}" font-size="11" fill="#1d2330" text-anchor="middle">${bin.count}</text>`,
    );
  });
  // The x axis: a tick at every bin edge, labelled with the edge's value.
  stats.histogram.forEach((bin, i) => {
    const x = (plot.left + i * slot).toFixed(1);
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${plot.bottom}" y2="${plot.bottom + 5}" stroke="#475467"/>`,
      `<text x="${x}" y="${plot.bottom + 18}" font-size="10" fill="#475467" text-anchor="middle">${round(bin.from)}</text>`,
    );
    if (i === stats.histogram.length - 1) {
      parts.push(
        `<line x1="${plot.right}" x2="${plot.right}" y1="${plot.bottom}" y2="${plot.bottom + 5}" stroke="#475467"/>`,
        `<text x="${plot.right}" y="${plot.bottom + 18}" font-size="10" fill="#475467" text-anchor="middle">${round(bin.to)}</text>`,
      );
    }
  });
  parts.push(
    `<line x1="${plot.left}" x2="${plot.right}" y1="${plot.bottom}" y2="${plot.bottom}" stroke="#475467"/>`,
    `<line x1="${plot.left}" x2="${plot.left}" y1="${plot.top}" y2="${plot.bottom}" stroke="#475467"/>`,
    `<text x="${(plot.left + plotWidth / 2).toFixed(1)}" y="${height - 24}" font-size="12" fill="#1d2330" text-anchor="middle">${escapeXml(stats.column)} (bins of equal width)</text>`,
    `<text transform="translate(18 ${(plot.top + plotHeight / 2).toFixed(1)}) rotate(-90)" font-size="12" fill="#1d2330" text-anchor="middle">Rows (count)</text>`,
  );
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="system-ui, sans-serif" role="img" aria-label="${escapeXml(`${title}: histogram of ${stats.column}`)}">` +
    `${parts.join("")}</svg>\n`
  );
}

/** Round y-axis ticks from 0 to at least `peak`: steps of 1, 2 or 5 × 10^k, at most about 6 of them. */
export function countTicks(peak: number): number[] {
  const rough = Math.max(1, peak / 5);
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((candidate) => candidate >= rough)!;
  const ticks: number[] = [];
  for (let tick = 0; tick < peak + step; tick += step) ticks.push(tick);
  return ticks;
}

/** The same findings as a Markdown report. */
export function renderMarkdown(title: string, stats: ColumnStats, source: { name: string; sha256: string }): string {
  const rows = stats.histogram.map((bin) => `| ${round(bin.from)} – ${round(bin.to)} | ${bin.count} |`).join("\n");
  return [
    `# ${title}`,
    "",
    `Column **${stats.column}** of \`${source.name}\` (sha256 \`${source.sha256}\`).`,
    "",
    `- values: ${stats.count}`,
    `- min: ${round(stats.min)}`,
    `- mean: ${round(stats.mean)}`,
    `- max: ${round(stats.max)}`,
    "",
    "| range | count |",
    "| --- | --- |",
    rows,
    "",
  ].join("\n");
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
