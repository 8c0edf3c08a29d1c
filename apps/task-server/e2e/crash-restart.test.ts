// Durability: the whole `wrangler dev` process group is SIGKILLed while `send_report` renders pages, then started
// again on the same persist dir. The same task id must carry on from its journal and complete.
import { WranglerDev } from "@durable-mcp/test-harness";
import { describe, expect, inject, it } from "vitest";
import { demoClient, renderedPages } from "./mcp-http.js";

const server = inject("wrangler");
const mcp = demoClient(server.url);
const PAGES = 6;

describe("durability across a crash of wrangler dev", () => {
  it(
    "resumes the same task after a SIGKILL of the process group, without going back on rendered pages",
    {
      timeout: 240_000,
    },
    async () => {
      const created = await mcp.startTask("send_report", { to: "erin@example.com", pages: PAGES, secondsPerPage: 1 });
      const taskId = created.taskId;

      const before = await mcp.pollTask(taskId, (task) => (renderedPages(task.statusMessage) ?? 0) >= 2);
      const renderedBefore = renderedPages(before.statusMessage) ?? 0;
      // The crash has to land mid-rendering for this test to mean anything.
      expect(before.status).toBe("working");
      expect(renderedBefore).toBeLessThan(PAGES);

      await WranglerDev.attach(server).restart("SIGKILL");

      const counts: number[] = [];
      const statuses = new Set<string>();
      const waiting = await mcp.pollTask(taskId, (task) => task.status !== "working", {
        seen: (task) => {
          statuses.add(task.status);
          const rendered = renderedPages(task.statusMessage);
          if (rendered !== null) counts.push(rendered);
        },
      });
      // The task survived under its id, and reached its confirmation having rendered every page.
      expect(waiting.taskId).toBe(taskId);
      expect(waiting.createdAt).toBe(created.createdAt);
      expect(waiting.status).toBe("input_required");
      expect(waiting.statusMessage).toBe(`rendered ${PAGES}/${PAGES} pages`);
      expect([...statuses].toSorted()).toEqual(
        statuses.has("working") ? ["input_required", "working"] : ["input_required"],
      );
      // Pages journaled before the crash were not rendered again: progress never fell below what was seen then,
      // and never went backwards.
      expect(counts.length).toBeGreaterThan(0);
      expect(Math.min(...counts)).toBeGreaterThanOrEqual(renderedBefore);
      expect(counts).toEqual(counts.toSorted((a, b) => a - b));

      expect(Object.keys(waiting.inputRequests ?? {})).toEqual(["confirm send"]);
      await mcp.updateTask(taskId, { "confirm send": { action: "accept", content: { send: true } } });

      const final = await mcp.pollTask(taskId, (task) => !["working", "input_required"].includes(task.status));
      expect(final.status).toBe("completed");
      expect(final.result).toMatchObject({
        content: [{ type: "text", text: `Sent ${PAGES} pages to erin@example.com.` }],
        structuredContent: { pages: PAGES, messageId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
      });
    },
  );
});
