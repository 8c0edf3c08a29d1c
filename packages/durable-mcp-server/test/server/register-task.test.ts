import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { McpServer, type Step } from "../../src/index.js";
import { taskDefinitionOf } from "../../src/runner/task-definition.js";

const emptyHandler = async () => ({ content: [] });

describe("registerTask", () => {
  it("types the handler's input from the zod schema, output side (defaults applied)", () => {
    const server = new McpServer({ name: "types", version: "1.0.0" });
    server.registerTask(
      "typed",
      { inputSchema: z.object({ to: z.string(), pages: z.number().default(3) }) },
      async (input, step) => {
        expectTypeOf(input).toEqualTypeOf<{ to: string; pages: number }>();
        expectTypeOf(step).toEqualTypeOf<Step>();
        return { content: [] };
      },
    );
    const definition = server[taskDefinitionOf]("typed")!;
    expect(definition.parseInput({ to: "a" })).toEqual({ ok: true, value: { to: "a", pages: 3 } });
    // The schema's issues, every one with its path (the invalid_arguments envelope is built from them).
    expect(definition.parseInput({ pages: "x" })).toMatchObject({
      ok: false,
      issues: [
        { path: ["to"], message: expect.any(String) },
        { path: ["pages"], message: expect.any(String) },
      ],
    });
  });

  it("refuses a second task under the same name", () => {
    const server = new McpServer({ name: "dupes", version: "1.0.0" });
    const config = { inputSchema: z.object({}) };
    server.registerTask("once", config, async () => ({ content: [] }));
    expect(() => server.registerTask("once", config, async () => ({ content: [] }))).toThrow(/already registered/);
  });

  it("takes the replay mode (default fail) and refuses an unknown one naming the task", () => {
    const server = new McpServer({ name: "replay", version: "1.0.0" });
    server.registerTask("plain", { inputSchema: z.object({}) }, emptyHandler);
    server.registerTask("strict", { inputSchema: z.object({}), replay: "strict" }, emptyHandler);
    expect(server[taskDefinitionOf]("plain")!.replay).toBe("fail");
    expect(server[taskDefinitionOf]("strict")!.replay).toBe("strict");
    const loose = { inputSchema: z.object({}), replay: "loose" as "warn" };
    expect(() => server.registerTask("loose", loose, emptyHandler)).toThrow(
      /task "loose": replay must be "fail", "warn" or "strict", not "loose"/,
    );
  });

  it("reads TTL and poll interval as durations, and null as no TTL", () => {
    const server = new McpServer({ name: "durations", version: "1.0.0" });
    server.registerTask(
      "a",
      { inputSchema: z.object({}), ttl: "2 hours", pollInterval: "500 milliseconds" },
      async () => null,
    );
    server.registerTask("b", { inputSchema: z.object({}), ttl: null }, async () => null);
    expect(server[taskDefinitionOf]("a")).toMatchObject({ ttlMs: 7_200_000, pollIntervalMs: 500 });
    expect(server[taskDefinitionOf]("b")).toMatchObject({ ttlMs: null, pollIntervalMs: 1_000 });
  });
});
