// Plants in a copy of the built declarations what scripts/check-api.mjs exists to catch — an export the committed
// report does not have (and without TSDoc), an @example that no longer compiles, a function parameter without its
// @param — and expects the check to fail naming each. Needs dist/ (the `lint` target runs after `build`).
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const script = join(packageDir, "scripts", "check-api.mjs");
const copies = [];

afterEach(() => {
  for (const root of copies.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** Replaces `from` (which must be there) by `to` in a file of the copy. */
function replaceIn(file, from, to) {
  const text = readFileSync(file, "utf8");
  expect(text).toContain(from);
  writeFileSync(file, text.replace(from, to));
}

describe("check-api", () => {
  it("fails on a new export, an undocumented export, an example that does not compile and a missing @param", () => {
    const root = mkdtempSync(join(tmpdir(), "check-api-test-"));
    copies.push(root);
    const dist = join(root, "dist");
    cpSync(join(packageDir, "dist"), dist, { recursive: true });
    appendFileSync(join(dist, "index.d.ts"), "\nexport declare const planted: number;\n");
    replaceIn(
      join(dist, "errors", "errors.d.ts"),
      'throw new NonRetryableError("the card has expired");',
      "throw new NonRetryableError(42);",
    );
    replaceIn(join(dist, "testing", "mcp-client.d.ts"), " * @param ms - How long to wait, in milliseconds.\n", "");

    const run = spawnSync(process.execPath, [script, "--dist", dist], { encoding: "utf8" });
    const output = `${run.stdout}${run.stderr}`;
    expect(output).toContain("durable-mcp-server: the public surface differs from api/durable-mcp-server.api.md");
    expect(output).toContain("durable-mcp-server: planted has no TSDoc summary");
    expect(output).toContain("durable-mcp-server: planted has no @example");
    expect(output).toContain("durable-mcp-server: the @example of NonRetryableError does not compile");
    expect(output).toContain("durable-mcp-server/testing/mcp-client: sleep: the function has no @param ms");
    expect(run.status).toBe(1);
  });
});
