import { fileLink, RepairableError, type McpServer } from "durable-mcp-server";
import * as z from "zod";
import { columnStats, parseCsv, profile } from "./csv.js";
import { renderMarkdown, renderSvg } from "./report.js";

/** CSVs above this are refused: the showcase parses in memory. */
const MAX_CSV_BYTES = 20 * 1024 * 1024;

/**
 * The showcase pipeline: an uploaded CSV (by file handle) → a profile → a question (which column, which format) →
 * statistics from a flaky service (retried) → a durable pause → a chart or report written to R2 as a new file.
 * Every step is journaled, so evictions, deploys and restarts resume it where it stood.
 */
export function registerDatasetReport(server: McpServer): void {
  server.registerTask(
    "dataset_report",
    {
      title: "Dataset report",
      description:
        "Charts a column of an uploaded CSV: profiles it, asks which column and format, retries a flaky service, " +
        "pauses durably, and writes an SVG chart or Markdown report you can download. Upload the CSV first.",
      inputSchema: z.object({
        file: z.string().meta({ title: "CSV file", description: "Handle of the uploaded CSV (file_…)." }),
        title: z
          .string()
          .min(1)
          .max(120)
          .default("Dataset report")
          .meta({ title: "Report title", description: "Up to 120 characters; also names the file." }),
        flakyAttempts: z.number().int().min(0).max(3).default(1).meta({
          title: "Simulated failures",
          description: "0 to 3: how many times the statistics service fails before it answers (shows retries).",
        }),
        pauseSeconds: z
          .number()
          .min(0)
          .max(3600)
          .default(2)
          .meta({ title: "Pause (seconds)", description: "0 to 3600 s: a durable pause before rendering." }),
      }),
      pollInterval: "1 second",
      fallback: "handle",
    },
    async ({ file, title, flakyAttempts, pauseSeconds }, step) => {
      const csv = await step.files.open(file, { param: "file" });
      if (csv.size > MAX_CSV_BYTES) {
        throw new RepairableError({
          code: "file_too_large",
          message: `${csv.name} is ${csv.size} bytes; this report reads at most ${MAX_CSV_BYTES}.`,
          retryable: false,
          recoveryHint: "Upload a smaller sample of the data and start the report with its handle.",
          param: "file",
        });
      }
      const shape = await step.do("profile", async () => profile(parseCsv(await csv.text())));
      await step.status(`profiled ${shape.rows} rows, ${shape.columns.length} columns`, { progress: 0.2 });
      const numeric = shape.columns.filter((column) => column.numeric).map((column) => column.name);
      if (numeric.length === 0) {
        throw new RepairableError({
          code: "no_numeric_column",
          message: `${csv.name} has no column whose values are all numbers.`,
          retryable: false,
          recoveryHint: "Upload a CSV with a header row and at least one numeric column.",
          param: "file",
          details: { columns: shape.columns.map((column) => column.name) },
        });
      }

      const choice = await step.elicit(
        "choose column",
        {
          message: `${csv.name}: ${shape.rows} rows. Which column should the report chart, and as what?`,
          requestedSchema: {
            type: "object",
            properties: {
              column: { type: "string", title: "Column", enum: numeric },
              format: { type: "string", title: "Format", enum: ["svg", "markdown"], default: "svg" },
            },
            required: ["column", "format"],
          },
        },
        { timeout: "1 hour" },
      );
      if (choice.action !== "accept") {
        return { content: [{ type: "text", text: `No report: the question was answered "${choice.action}".` }] };
      }
      const column = String(choice.content?.column);
      const format = choice.content?.format === "markdown" ? "markdown" : "svg";
      await step.status(`charting ${column} as ${format}`, { progress: 0.4 });

      // A stand-in for a remote statistics service that times out now and then: retried with backoff.
      const stats = await step.do(
        "compute statistics",
        { retries: { limit: 3, delay: "500 milliseconds", backoff: "exponential" }, timeout: "30 seconds" },
        async ({ attempt }) => {
          if (attempt <= flakyAttempts) throw new Error(`statistics service timed out (attempt ${attempt})`);
          return columnStats(parseCsv(await csv.text()), column);
        },
      );
      await step.status(`statistics ready (${stats.count} values)`, { progress: 0.7 });
      await step.sleep("rate limit pause", `${pauseSeconds} seconds`);

      const artifact = await step.files.write("render", {
        name: format === "svg" ? `${slug(title)}.svg` : `${slug(title)}.md`,
        mimeType: format === "svg" ? "image/svg+xml" : "text/markdown",
        body: () => (format === "svg" ? renderSvg(title, stats) : renderMarkdown(title, stats, csv)),
      });
      await step.status("report ready", { progress: 1 });
      return {
        content: [
          {
            type: "text",
            text: `${title}: ${column} over ${stats.count} rows (min ${stats.min}, mean ${stats.mean.toFixed(3)}, max ${stats.max}). File ${artifact.handle} (${artifact.size} bytes, sha256 ${artifact.sha256}).`,
          },
          fileLink(artifact),
        ],
        structuredContent: {
          column,
          format,
          stats: { count: stats.count, min: stats.min, max: stats.max, mean: stats.mean },
          artifact,
        },
      };
    },
  );
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "report"
  );
}
