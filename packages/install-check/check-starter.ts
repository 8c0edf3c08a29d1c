// The library the way a user meets it: packs durable-mcp-server, copies the starter (examples/report-task) to a
// folder outside the repository, points its dependency at the tarball, and with plain npm under the machine's own
// Node (no pnpm, no workspace, none of the repository's PATH) installs it, typechecks it (also under strict,
// exactOptionalPropertyTypes and noPropertyAccessFromIndexSignature), runs its tests, bundles it (and checks that the
// bundle has none of the testing seam), and makes a real
// task call to it under `wrangler dev`. Writes its checks to results/tests/install-check.json and prints the
// tarball's and the bundle's sizes.
import { execFileSync, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const work = mkdtempSync(join(tmpdir(), "install-check-"));
const port = Number(process.env["INSTALL_CHECK_PORT"] ?? 8785);
const checks: string[] = [];
const began = performance.now();
/** Code only the testing seam has (durable-mcp-server/testing's withTestingSeam and runner/testing-seam.ts). */
const SEAM_MARKERS = ["function withTestingSeam", "function runTestingOp", "TestingSeamError", "INTO injected_steps"];

// The machine's own environment: nothing of pnpm's or the workspace's (node_modules/.bin with Node 22, npx caches,
// npm_* settings, the workspace's wrangler conditions).
const path = (process.env["PATH"] ?? "")
  .split(delimiter)
  .filter((dir) => !dir.includes("node_modules") && !dir.includes("/_npx/"))
  .join(delimiter);
const userEnv: Record<string, string> = { PATH: path, HOME: process.env["HOME"] ?? work, CI: "true" };
for (const name of ["TMPDIR", "LANG", "npm_config_registry", "NPM_CONFIG_REGISTRY"]) {
  const value = process.env[name];
  if (value !== undefined) userEnv[name] = value;
}

function sh(cwd: string, command: string, args: string[], env: Record<string, string> = userEnv): string {
  try {
    return execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: "pipe", timeout: 600_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout ?? ""}\n${stderr ?? ""}`, {
      cause: error,
    });
  }
}

function check(name: string, run: () => void) {
  run();
  checks.push(name);
  console.log(`install-check: ok  ${name}`);
}

async function main() {
  // 1. The tarball, as `pnpm pack` publishes it (prepack builds dist/).
  const library = join(root, "packages/durable-mcp-server");
  sh(library, "pnpm", ["pack", "--pack-destination", work], process.env as Record<string, string>);
  const tarball = readdirSync(work).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error(`pnpm pack wrote no tarball into ${work}`);

  // 2. The starter, outside the repository, on that tarball.
  const starter = join(work, "starter");
  cpSync(join(root, "examples/report-task"), starter, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|dist|\.wrangler)$/.test(source),
  });
  const manifestPath = join(starter, "package.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  manifest.dependencies["durable-mcp-server"] = `file:../${tarball}`;
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const nodeVersion = sh(starter, "node", ["--version"]).trim();
  console.log(
    `install-check: the starter in ${starter}, npm ${sh(starter, "npm", ["--version"]).trim()}, ${nodeVersion}`,
  );

  check("npm install from the tarball", () => sh(starter, "npm", ["install", "--no-audit", "--no-fund"]));
  check("one copy of zod and of the SDK for the Worker, the library and the SDK", () => {
    // Dev tools may bring their own (the vitest plugin has a zod of its own); what the Worker bundles must not.
    const nested = [
      "node_modules/durable-mcp-server/node_modules/zod",
      "node_modules/durable-mcp-server/node_modules/@modelcontextprotocol/server",
      "node_modules/@modelcontextprotocol/server/node_modules/zod",
    ].filter((dir) => existsSync(join(starter, dir)));
    if (nested.length > 0) throw new Error(`second copies installed: ${nested.join(", ")}`);
  });
  check("typecheck", () => sh(starter, "npm", ["run", "typecheck"]));
  check("typecheck under exactOptionalPropertyTypes and noPropertyAccessFromIndexSignature", () =>
    sh(starter, "npm", [
      "exec",
      "--",
      "tsc",
      "--noEmit",
      "-p",
      "tsconfig.json",
      "--strict",
      "--exactOptionalPropertyTypes",
      "--noPropertyAccessFromIndexSignature",
    ]),
  );
  check("its own tests", () => sh(starter, "npm", ["test"]));
  let bundleKiB = 0;
  check("wrangler deploy --dry-run", () => {
    sh(starter, "npm", ["run", "build"]);
    bundleKiB = statSync(join(starter, "dist/index.js")).size / 1024;
  });
  check("the deployed bundle has none of the testing seam", () => {
    // The starter's tests export withTestingSeam's TaskRunner from test/worker.ts; what `main` bundles must not
    // contain the seam (the names survive bundling: wrangler does not minify by default).
    const bundle = readFileSync(join(starter, "dist/index.js"), "utf8");
    const found = SEAM_MARKERS.filter((marker) => bundle.includes(marker));
    if (found.length > 0) throw new Error(`dist/index.js contains the testing seam: ${found.join(", ")}`);
  });
  await taskCallUnderWranglerDev(starter);
  checks.push("a task call under wrangler dev");
  console.log("install-check: ok  a task call under wrangler dev");

  const tarballKiB = statSync(join(work, tarball)).size / 1024;
  console.log(
    `install-check: ${checks.length} checks passed in ${((performance.now() - began) / 1000).toFixed(0)} s; ` +
      `tarball ${tarballKiB.toFixed(1)} KiB, starter bundle (wrangler deploy --dry-run) ${bundleKiB.toFixed(1)} KiB`,
  );
}

async function taskCallUnderWranglerDev(starter: string) {
  // Its own process group, so that stopping it also stops the workerd it spawns.
  const dev = spawn(
    "npm",
    ["run", "dev", "--", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(port + 1000)],
    { cwd: starter, env: userEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  dev.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  dev.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}/mcp`;
  // The client comes from the packed package as the starter installed it (`durable-mcp-server/testing/mcp-client`,
  // resolved through its `exports` from the starter's folder, as a user's test would), so this also proves that
  // subpath works from the tarball.
  const clientModule = join(starter, "mcp-client-check.mjs");
  writeFileSync(clientModule, 'export * from "durable-mcp-server/testing/mcp-client";\n');
  const { McpHttpClient } = (await import(
    pathToFileURL(clientModule).href
  )) as typeof import("../durable-mcp-server/src/testing/mcp-client.ts");
  const client = new McpHttpClient(url, { timeoutMs: 10_000 });
  try {
    const deadline = Date.now() + 180_000;
    for (;;) {
      try {
        await client.call("server/discover");
        break;
      } catch (error) {
        if (dev.exitCode !== null || Date.now() > deadline)
          throw new Error(`wrangler dev did not come up on ${url}:\n${output}`, { cause: error });
        await new Promise((done) => setTimeout(done, 500));
      }
    }
    const created = await client.startTask("build_report", { region: "emea", coolDown: 10 });
    const task = await client.pollTask(created.taskId, (seen) => seen.status !== "working" || Date.now() > deadline);
    if (task.status !== "completed") throw new Error(`task: ${JSON.stringify(task)}`);
    const text = JSON.stringify(task.result);
    if (!text.includes("Revenue: 4000")) throw new Error(`unexpected result: ${text}`);
  } finally {
    try {
      process.kill(-dev.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

try {
  await main();
  mkdirSync(join(root, "results/tests"), { recursive: true });
  writeFileSync(join(root, "results/tests/install-check.json"), JSON.stringify({ passed: checks.length, failed: 0 }));
} catch (error) {
  mkdirSync(join(root, "results/tests"), { recursive: true });
  writeFileSync(join(root, "results/tests/install-check.json"), JSON.stringify({ passed: checks.length, failed: 1 }));
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
