// Checks that the folders of src/ form layers that point one way (design/runtime.md, "Module boundaries"): every
// relative import in src/**/*.ts must go to the importer's own layer or a lower one. Files directly in src/ (ids.ts,
// limits.ts, task-events.ts, …) are the lowest layer but one (only util/ is lower); src/index.ts is the exempt top
// (the public surface re-exports from everywhere). Prints every edge that points up, every cycle between folders and
// every cycle between modules (inside a folder too, `import type` included: a module's imports form a tree, so each
// reads without the ones above it) and every import into a DOORS folder (a Durable Object's own code) that does not go
// through its index.ts, then exits 1; prints the layer order and exits 0 when there is none. Plain Node, no dependency: the
// imports are ESM `import`/`export … from` statements with relative specifiers, which a regex reads reliably here
// (tsc rejects anything else the compiler would resolve differently, e.g. a bare path into src). CI runs it in the
// package's `lint` target. `node scripts/check-layers.mjs [srcDir]` checks another tree (to see it bite on one);
// `--list` also prints what each folder imports (the "imports" column of design/runtime.md).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Low to high. A folder may import its own layer and any layer to its left. */
export const LAYERS = [
  "util",
  "(root)",
  "errors",
  "storage",
  "wire",
  "steps",
  "file-runner",
  "files",
  "runner",
  "tasks",
  "fallback",
  "server",
  "routing",
  "testing",
];

/**
 * Folders that hold a Durable Object's own code: other folders reach them only through their index.ts (the RPC
 * contract and what the Worker side may use), never a module behind it.
 */
export const DOORS = ["runner", "file-runner"];

const args = process.argv.slice(2);
const list = args.includes("--list");
const srcDir = resolve(
  args.find((arg) => !arg.startsWith("--")) ?? join(dirname(fileURLToPath(import.meta.url)), "..", "src"),
);

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

/** The folder a src file belongs to: its first path segment, or "(root)" for files directly in src/. */
function layerOf(file) {
  const parts = relative(srcDir, file).split(sep);
  return parts.length === 1 ? "(root)" : parts[0];
}

// `import … from "./x.js"`, `import "./x.js"`, `export … from "./x.js"` and `import("./x.js")`, including
// `import type`; multi-line import lists are matched because `[^;]*?` crosses newlines.
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s(?:[^;'"]*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

const problems = [];
const edges = new Map(); // "from -> to" => first example "file -> import"
const modules = new Map(); // "steps/engine.ts" => the src modules it imports
const files = sourceFiles(srcDir);
for (const file of files) {
  const rel = relative(srcDir, file).split(sep).join("/");
  if (rel === "index.ts") continue;
  const from = layerOf(file);
  const text = readFileSync(file, "utf8");
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2];
    const target = resolve(dirname(file), specifier);
    if (relative(srcDir, target).startsWith("..")) {
      problems.push(`${rel} imports ${specifier}, outside src/`);
      continue;
    }
    const imported = relative(srcDir, target).split(sep).join("/").replace(/\.js$/, ".ts");
    modules.set(rel, [...(modules.get(rel) ?? []), imported]);
    const to = layerOf(target);
    if (to === from) continue;
    if (DOORS.includes(to) && imported !== `${to}/index.ts`) {
      problems.push(`${rel} imports ${specifier}: ${to}/ is reached only through ${to}/index.ts`);
    }
    const key = `${from} -> ${to}`;
    if (!edges.has(key)) edges.set(key, `${rel} imports ${specifier}`);
  }
}

// A tree whose imports the pattern no longer reads would pass vacuously: the library always has edges between folders.
if (edges.size === 0) problems.push("no import between folders found: the import pattern reads nothing");

const rank = (layer) => LAYERS.indexOf(layer);
for (const layer of new Set([...edges.keys()].flatMap((key) => key.split(" -> ")))) {
  if (rank(layer) < 0) problems.push(`folder ${layer}/ has no place in LAYERS (scripts/check-layers.mjs)`);
}
for (const [key, example] of edges) {
  const [from, to] = key.split(" -> ");
  if (rank(from) >= 0 && rank(to) > rank(from)) problems.push(`upward edge ${key} (e.g. ${example})`);
}

// Cycles between folders, found on the folder graph itself so that they are reported even if LAYERS were wrong.
const graph = new Map();
for (const key of edges.keys()) {
  const [from, to] = key.split(" -> ");
  graph.set(from, [...(graph.get(from) ?? []), to]);
}
const reported = new Set();
function walk(node, path) {
  const at = path.indexOf(node);
  if (at >= 0) {
    const cycle = path.slice(at);
    const canonical = cycle.toSorted().join(",");
    if (!reported.has(canonical)) {
      reported.add(canonical);
      problems.push(`cycle ${[...cycle, node].join(" -> ")}`);
    }
    return;
  }
  for (const next of graph.get(node) ?? []) walk(next, [...path, node]);
}
for (const node of graph.keys()) walk(node, []);

// Cycles between modules: a depth-first search that reports each cycle once (by its set of modules).
const state = new Map(); // module => "open" while on the path, "done" once all it reaches is searched
function visit(module, path) {
  state.set(module, "open");
  for (const next of modules.get(module) ?? []) {
    if (state.get(next) === "open") {
      const cycle = path.slice(path.indexOf(next));
      const canonical = cycle.toSorted().join(",");
      if (!reported.has(canonical)) {
        reported.add(canonical);
        problems.push(`module cycle ${[...cycle, next].join(" -> ")}`);
      }
    } else if (!state.has(next)) visit(next, [...path, next]);
  }
  state.set(module, "done");
}
for (const module of modules.keys()) if (!state.has(module)) visit(module, [module]);

if (problems.length > 0) {
  console.error(`check-layers: ${problems.length} problem(s) in ${srcDir}`);
  for (const problem of problems) console.error(`  ${problem}`);
  process.exit(1);
}
if (list) {
  for (const [from, targets] of [...graph].toSorted(([a], [b]) => rank(a) - rank(b))) {
    console.log(`${from}: ${targets.toSorted((a, b) => rank(b) - rank(a)).join(", ")}`);
  }
}
console.log(
  `check-layers: ${edges.size} folder edges, all pointing down (${LAYERS.join(" < ")}); ${files.length} modules, no import cycle`,
);
