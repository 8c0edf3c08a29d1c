// The committed console page (src/console/console-page.generated.ts) must be what console-app/ builds to now: the
// check passes on the committed module and fails, naming the fix, on a stale one.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const script = join(packageDir, "scripts", "build-console.mjs");
const committed = join(packageDir, "src", "console", "console-page.generated.ts");

const sha = (text) => `sha256-${createHash("sha256").update(text, "utf8").digest("base64")}`;
const check = (...args) => spawnSync("node", [script, "--check", ...args], { cwd: packageDir, encoding: "utf8" });

describe("build-console --check", () => {
  it("passes on the committed page", () => {
    const run = check();
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it("fails on a stale page", () => {
    const dir = mkdtempSync(join(tmpdir(), "build-console-"));
    try {
      const stale = join(dir, "console-page.generated.ts");
      writeFileSync(stale, readFileSync(committed, "utf8").replace("Tasks console", "Old console"));
      const run = check("--target", stale);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/stale: run `node scripts\/build-console.mjs`/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("has one inline script and one inline stylesheet (what the CSP hashes), and nothing loaded from elsewhere", async () => {
    const { CONSOLE_PAGE, CONSOLE_SCRIPT_HASH, CONSOLE_STYLE_HASH } =
      await import("../src/console/console-page.generated.ts");
    const scripts = [...CONSOLE_PAGE.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)];
    const styles = [...CONSOLE_PAGE.matchAll(/<style>([\s\S]*?)<\/style>/g)];
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    expect(CONSOLE_PAGE).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet/);
    expect(sha(scripts[0][1])).toBe(CONSOLE_SCRIPT_HASH);
    expect(sha(styles[0][1])).toBe(CONSOLE_STYLE_HASH);
  });
});
