import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../src/wrangler.ts";

const root = join(import.meta.dirname, "../../..");

describe("parseJsonc (a wrangler.jsonc)", () => {
  it("reads comments and trailing commas, and leaves comment-like text inside strings alone", () => {
    const text = [
      "// the Worker",
      "{",
      '  "name": "w", /* inline */',
      '  "url": "http://host//path", "glob": "/* not a comment */",',
      '  "quote": "a\\"b,}", "backslash": "\\\\",',
      '  "list": [1, 2, /* last */ ],',
      "  // closing",
      "}",
    ].join("\n");
    expect(parseJsonc(text)).toEqual({
      name: "w",
      url: "http://host//path",
      glob: "/* not a comment */",
      quote: 'a"b,}',
      backslash: "\\",
      list: [1, 2],
    });
  });

  it("reads every wrangler.jsonc of the workspace as wrangler does", () => {
    for (const path of [
      "wrangler.jsonc",
      "examples/reliability-lab/wrangler.jsonc",
      "examples/conformance-server/wrangler.jsonc",
      "examples/bench-server/wrangler.jsonc",
      "packages/durable-mcp-server/test/wrangler.jsonc",
    ]) {
      const config = parseJsonc(readFileSync(join(root, path), "utf8")) as Record<string, unknown>;
      expect(typeof config.name, path).toBe("string");
      expect(config.compatibility_date, path).toBe("2026-11-01");
    }
  });

  it.each([
    ['{"a": 1} /* never closed', "a block comment that is never closed"],
    ['{"a": [1,,2]}', "an empty element"],
    ['{"a": 1} {"b": 2}', "two values"],
    ['{"a": 1', "an unclosed object"],
    ["", "nothing"],
  ])("refuses %j (%s) instead of guessing", (text) => {
    expect(() => parseJsonc(text)).toThrow();
  });

  it("says what is wrong and where", () => {
    expect(() => parseJsonc('{\n  "a": 1,\n  "b" 2\n}')).toThrow("JSONC: ColonExpected at 3:7");
  });
});
