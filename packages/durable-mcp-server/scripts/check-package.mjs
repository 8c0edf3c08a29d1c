// Packs the library as it would be published and checks the tarball the way a user meets it: built JS and
// declarations present, no tests or benches, every `exports` target in the tarball, and no findings from publint or
// from @arethetypeswrong/cli with the esm-only profile (the package is ESM only: Workers bundle ESM). Prints the
// tarball's path and size. Run with `pnpm run check:package`; CI runs it in the package's `lint` target.
import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = process.argv[2] ?? mkdtempSync(join(tmpdir(), "durable-mcp-server-pack-"));
const run = (command, args) => execFileSync(command, args, { cwd: packageRoot, encoding: "utf8", stdio: "pipe" });

// pnpm (not npm) packs, writing the tarball's package.json as published. Without `prepack` (which empties dist/
// before rebuilding it): this runs in the lint target, beside suites that import the built dist/ at that moment,
// and nx has built dist/ for it already (lint dependsOn build). install-check, which runs alone, packs with prepack.
run("pnpm", ["pack", "--ignore-scripts", "--pack-destination", out]);
const tarball = join(
  out,
  `durable-mcp-server-${JSON.parse(run("node", ["-p", "JSON.stringify(require('./package.json').version)"]))}.tgz`,
);
const files = new Set(
  run("tar", ["tzf", tarball])
    .split("\n")
    .filter(Boolean)
    .map((path) => path.replace(/^package\//, "")),
);
const manifest = JSON.parse(run("tar", ["xzfO", tarball, "package/package.json"]));

const problems = [];
for (const required of ["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts"]) {
  if (!files.has(required)) problems.push(`missing ${required}`);
}
for (const path of files) {
  if (/^(test|bench|scripts)\//.test(path) || /\.(test|bench)\.ts$/.test(path)) problems.push(`ships ${path}`);
}
const targets = (value) =>
  typeof value === "string" ? [value] : Object.values(value ?? {}).flatMap((inner) => targets(inner));
for (const target of targets(manifest.exports)) {
  if (!files.has(target.replace(/^\.\//, ""))) problems.push(`exports names ${target}, which is not in the tarball`);
}
if (problems.length > 0) {
  console.error(`check-package: ${tarball}\n  ${problems.join("\n  ")}`);
  process.exit(1);
}

// Both print their findings; a finding is a non-zero exit.
execFileSync("publint", ["run", "--strict", tarball], { cwd: packageRoot, stdio: "inherit" });
execFileSync("attw", [tarball, "--profile", "esm-only", "--format", "table-flipped"], {
  cwd: packageRoot,
  stdio: "inherit",
});
console.log(
  `check-package: ${tarball} (${files.size} files, ${(statSync(tarball).size / 1024).toFixed(1)} KiB packed)`,
);
