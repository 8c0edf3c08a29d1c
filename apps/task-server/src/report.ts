import type { ColumnStats } from "./csv.js";

const round = (value: number) => Number(value.toPrecision(4));

/** An SVG bar chart of a column's histogram. */
export function renderSvg(title: string, stats: ColumnStats): string {
  const width = 640;
  const height = 360;
  const top = 48;
  const bottom = 40;
  const barArea = height - top - bottom;
  const peak = Math.max(1, ...stats.histogram.map((bin) => bin.count));
  const slot = (width - 40) / stats.histogram.length;
  const bars = stats.histogram
    .map((bin, i) => {
      const h = (bin.count / peak) * barArea;
      const x = 20 + i * slot;
      const y = top + barArea - h;
      return (
        `<rect x="${x + 4}" y="${y}" width="${slot - 8}" height="${h}" fill="#4f7cff"><title>${round(bin.from)}–${round(bin.to)}: ${bin.count}</title></rect>` +
        `<text x="${x + slot / 2}" y="${height - 22}" font-size="10" text-anchor="middle">${round(bin.from)}</text>`
      );
    })
    .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">` +
    `<rect width="100%" height="100%" fill="#fff"/>` +
    `<text x="20" y="28" font-size="18">${escapeXml(title)}: ${escapeXml(stats.column)}</text>` +
    `${bars}<text x="20" y="${height - 6}" font-size="11">n=${stats.count} min=${round(stats.min)} mean=${round(stats.mean)} max=${round(stats.max)}</text></svg>\n`
  );
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
