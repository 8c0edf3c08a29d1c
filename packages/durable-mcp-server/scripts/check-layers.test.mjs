// Plants each violation scripts/check-layers.mjs exists to catch in a copy of src/ and expects the check to fail
// naming it; and checks that the real src/ passes and that imports in comments and strings are not read as imports.
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const script = join(packageDir, "scripts", "check-layers.mjs");
const copies = [];

/** A copy of src/ (in `<tmp>/src`, so that a tsconfig can be planted beside it) with `plant` applied. */
function plantedCopy(plant) {
  const root = mkdtempSync(join(tmpdir(), "check-layers-"));
  copies.push(root);
  const src = join(root, "src");
  cpSync(join(packageDir, "src"), src, { recursive: true });
  plant(src, root);
  return src;
}

function check(src) {
  const run = spawnSync(process.execPath, [script, ...(src ? [src] : [])], { encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Adds `line` at the top of the module `file` of the copy. */
const prepend = (src, file, line) =>
  writeFileSync(join(src, file), `${line}\n${readFileSync(join(src, file), "utf8")}`);

afterEach(() => {
  for (const root of copies.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("check-layers", () => {
  it("passes the library's src/", () => {
    const { status, output } = check();
    expect(output).toContain("all pointing down");
    expect(status).toBe(0);
  });

  it("passes a copy it was not asked to change, and ignores imports in comments, strings and templates", () => {
    const src = plantedCopy((dir) =>
      prepend(
        dir,
        "util/backoff.ts",
        [
          '// import { McpServer } from "../index.js";',
          '/* await import(`./${"x"}.js`); require("durable-mcp-server") */',
          'export const notAnImport = "import { x } from \'durable-mcp-server\'" + `import("../index.js")`;',
          "export const pattern = /import\\(\"['`]/;",
        ].join("\n"),
      ),
    );
    const { status, output } = check(src);
    expect(output).toContain("all pointing down");
    expect(status).toBe(0);
  });

  const violations = [
    [
      "a lower module importing the public index",
      "steps/duration.ts",
      'import type { McpServer } from "../index.js";',
      "steps/duration.ts:1 imports ../index.js, the public index",
    ],
    [
      "the public index through its folder",
      "errors/codes.ts",
      'export type { Task } from "..";',
      "errors/codes.ts:1 imports .., the public index",
    ],
    [
      "a testing entry point importing the public index",
      "testing/task-kit.ts",
      'import type { Step } from "../index.js";',
      "testing/task-kit.ts:1 imports ../index.js, the public index",
    ],
    [
      "the package by its own name",
      "wire/protocol.ts",
      'import { durableMcp } from "durable-mcp-server";',
      "wire/protocol.ts:1 imports the package by its own name, durable-mcp-server,",
    ],
    [
      "a subpath of the package by its own name",
      "steps/types.ts",
      'import type { TaskKit } from "durable-mcp-server/testing";',
      "steps/types.ts:1 imports the package by its own name, durable-mcp-server/testing,",
    ],
    [
      "a template-literal import()",
      "steps/duration.ts",
      "export const load = (name: string) => import(`../routing/${name}.js`);",
      "steps/duration.ts:1 uses import() with a specifier that is not a string literal",
    ],
    [
      "a template import() without substitutions",
      "util/http.ts",
      "export const load = () => import(`../index.js`);",
      "util/http.ts:1 uses import() with a specifier that is not a string literal",
    ],
    [
      "an import() of a variable",
      "util/http.ts",
      'const where = "../server/mcp-server.js"; export const load = () => import(where);',
      "util/http.ts:1 uses import() with a specifier that is not a string literal",
    ],
    [
      "a require()",
      "util/http.ts",
      'export const server = require("../server/mcp-server.js");',
      "util/http.ts:1 uses require()",
    ],
    [
      "a path that leaves src/ and comes back",
      "steps/duration.ts",
      'import type { McpServer } from "../../src/server/mcp-server.js";',
      "steps/duration.ts:1 imports ../../src/server/mcp-server.js, a path that leaves src/ and comes back",
    ],
    [
      "a path outside src/",
      "util/http.ts",
      'import "../../test/helpers.js";',
      "util/http.ts:1 imports ../../test/helpers.js, outside src/",
    ],
    [
      "an absolute path",
      "util/http.ts",
      `import "${packageDir}/src/server/mcp-server.js";`,
      "util/http.ts:1 imports /",
    ],
    [
      "a file: URL",
      "util/http.ts",
      'import "file:///src/server/mcp-server.js";',
      "util/http.ts:1 imports file:///src/server/mcp-server.js, an absolute path",
    ],
    [
      "a tsconfig paths alias",
      "util/http.ts",
      'import { McpServer } from "@lib/server/mcp-server.js";',
      "util/http.ts:1 imports @lib/server/mcp-server.js, which is neither a path inside src/ nor a dependency",
    ],
    [
      "a package.json import map",
      "util/http.ts",
      'import "#server/mcp-server.js";',
      "util/http.ts:1 imports #server/mcp-server.js, which is neither",
    ],
    [
      "a /// <reference path>",
      "util/http.ts",
      '/// <reference path="../server/mcp-server.ts" />',
      "util/http.ts has a /// <reference path>",
    ],
    [
      "an upward edge",
      "steps/duration.ts",
      'import type { RunnerClient } from "../runner/runner-client.js";',
      "upward edge steps -> runner",
    ],
    [
      "a cycle between modules",
      "util/encoding.ts",
      'import type { HmacKey } from "./hmac.js";',
      "module cycle util/encoding.ts -> util/hmac.ts -> util/encoding.ts",
    ],
  ];
  it.each(violations)("fails on %s, naming it", (_name, file, line, expected) => {
    const { status, output } = check(plantedCopy((src) => prepend(src, file, line)));
    expect(output).toContain(expected);
    expect(status).toBe(1);
  });

  it("fails on an import split over lines and on an import statement without a semicolon", () => {
    const src = plantedCopy((dir) =>
      prepend(dir, "util/http.ts", 'import {\n  durableMcp,\n} from\n  "durable-mcp-server"\nimport "../index.js"'),
    );
    const { status, output } = check(src);
    expect(output).toContain("util/http.ts:1 imports the package by its own name, durable-mcp-server,");
    expect(output).toContain("util/http.ts:5 imports ../index.js, the public index");
    expect(status).toBe(1);
  });

  it("fails on a tsconfig beside src/ that maps paths", () => {
    const src = plantedCopy((_dir, root) =>
      writeFileSync(
        join(root, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { paths: { "@lib/*": ["./src/*"] } } }),
      ),
    );
    const { status, output } = check(src);
    expect(output).toMatch(/tsconfig\.json sets paths/);
    expect(status).toBe(1);
  });

  it("fails on a module that is not TypeScript", () => {
    const src = plantedCopy((dir) => writeFileSync(join(dir, "util", "extra.js"), "export const x = 1;\n"));
    const { status, output } = check(src);
    expect(output).toContain("util/extra.js is not a .ts module");
    expect(status).toBe(1);
  });

  it("fails on a module over the line limit that LONG_FILES does not name", () => {
    const src = plantedCopy((dir) => appendFileSync(join(dir, "util", "http.ts"), "// filler\n".repeat(400)));
    const { status, output } = check(src);
    expect(output).toMatch(/util\/http\.ts has \d+ lines, over 400/);
    expect(status).toBe(1);
  });

  it("fails on a LONG_FILES entry that is no longer over the limit", () => {
    const src = plantedCopy((dir) => writeFileSync(join(dir, "testing", "task-kit.ts"), "export const x = 1;\n"));
    const { status, output } = check(src);
    expect(output).toContain("LONG_FILES names testing/task-kit.ts, which has 1 lines: drop the entry");
    // The module's exports are gone too, so other problems may follow; this one must be among them.
    expect(status).toBe(1);
  });
});
