// Checks that the folders of src/ form layers that point one way (design/runtime.md, "Module boundaries"): every
// import in src/**/*.ts must go to the importer's own layer or a lower one. Files directly in src/ (ids.ts, limits.ts,
// task-events.ts, …) are the lowest layer but one (only util/ is lower); src/index.ts is the public surface, the top:
// it may import everything and nothing may import it (testing/ included: its entry points import the modules that
// define what they need, so `durable-mcp-server/testing/mcp-client` stays loadable in Node without the Worker side).
// Prints every edge that points up, every cycle between folders and every cycle between modules (inside a folder too,
// `import type` included: a module's imports form a tree, so each reads without the ones above it), then exits 1;
// prints the layer order and exits 0 when there is none. It also fails on an import into a DOORS folder (a Durable
// Object's own code) that does not go through its index.ts.
//
// It cannot be bypassed by the ways a specifier can reach src/ without a relative path: each module is tokenised
// (comments, strings, template literals and regular expressions skipped), and every `import`/`export … from`,
// `import()` and `require()` is read. It fails on an import of the public index, an import of the package by its own
// name (TypeScript resolves `durable-mcp-server[/…]` to src/ through the `durable-mcp-source` condition), an
// `import()` whose specifier is not a string literal (a template or a variable can name any module), a `require()`,
// an absolute or `file:` specifier, a relative one that leaves src/ (even to come back, `../../src/…`), a bare one
// that is not a declared dependency (a tsconfig `paths` alias, a `#` import map), a tsconfig beside src/ that sets
// `paths`, `baseUrl` or `rootDirs`, a `/// <reference path>` and a module file that is not `.ts`. It also fails on a
// module over MAX_LINES lines that LONG_FILES does not name with its reason (and on a LONG_FILES entry that no longer
// needs to be there). Plain Node, no dependency. CI runs it in the package's `lint` target;
// scripts/check-layers.test.mjs plants each violation in a copy of src/. `node scripts/check-layers.mjs [srcDir]`
// checks another tree; `--list` also prints what each folder imports (the "imports" column of design/runtime.md).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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
  "catalog",
  "limiter",
  "runner",
  "tasks",
  "fallback",
  "server",
  "operator",
  "routing",
  "testing",
  "console",
];

/** The most lines a module of src/ may have: past it a file holds more than one concern, with a seam to split at. */
export const MAX_LINES = 400;

/** Modules allowed over MAX_LINES, each with the reason. Keep it short: an entry that is no longer over fails. */
export const LONG_FILES = {
  "runner/task-runner.ts":
    "one concern, the TaskRunner's RPC surface: a short method per call of task-runner-rpc.ts, each delegating to its module",
  "testing/mcp-client.ts":
    "one concern, the raw MCP HTTP client; over the limit by the TSDoc and examples of the public testing surface",
  "testing/task-kit.ts":
    "one concern, the task kit of durable-mcp-server/testing; over the limit by the TSDoc and examples of its surface",
};

/**
 * Folders that hold a Durable Object's own code: other folders reach them only through their index.ts (the RPC
 * contract and what the Worker side may use), never a module behind it.
 */
export const DOORS = ["runner", "file-runner", "limiter"];

/**
 * Modules of a DOORS folder that one other folder may import beside its index.ts, each with the reason: the test-only
 * seam is kept out of the index so that no production bundle, which imports the index, contains it.
 */
export const SIDE_DOORS = {
  "runner/testing-seam.ts": {
    from: "testing",
    reason: "the test-only seam, imported only by durable-mcp-server/testing",
  },
};

const args = process.argv.slice(2);
const list = args.includes("--list");
const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const srcDir = resolve(args.find((arg) => !arg.startsWith("--")) ?? join(packageDir, "src"));
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
/** What a bare specifier may name: the packages a user's install provides (never devDependencies). */
const declared = new Set([
  ...Object.keys(manifest.dependencies ?? {}),
  ...Object.keys(manifest.peerDependencies ?? {}),
]);
const MODULE_EXTENSION = /\.(?:[cm]?[jt]sx?)$/;

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return MODULE_EXTENSION.test(path) && !/\.test\.[cm]?[jt]sx?$/.test(path) ? [path] : [];
  });
}

/** The folder a src file belongs to: its first path segment, or "(root)" for files directly in src/. */
function layerOf(file) {
  const parts = relative(srcDir, file).split(sep);
  return parts.length === 1 ? "(root)" : parts[0];
}

// Keywords after which a `/` starts a regular expression rather than a division.
const BEFORE_EXPRESSION = new Set(
  "return typeof instanceof in of new delete void throw case do else yield await extends".split(" "),
);

/**
 * The tokens of a TypeScript module that matter for its imports: identifiers, string literals (their value), template
 * literals (as one opaque token each), punctuation; comments, regular expressions and numbers are skipped. Throws on
 * an unterminated literal, so a file the tokeniser misreads fails the check instead of passing it.
 */
export function tokenize(text) {
  const tokens = [];
  const templateDepths = []; // the brace depth at each open `${`
  let depth = 0;
  let i = 0;
  const lineAt = (at) => text.slice(0, at).split("\n").length;
  const fail = (what, at) => {
    throw new Error(`unterminated ${what} at line ${lineAt(at)}`);
  };
  const regexAllowed = () => {
    const last = tokens.at(-1);
    if (!last) return true;
    if (last.type === "name") return BEFORE_EXPRESSION.has(last.value);
    return last.type === "punct" && !")]}".includes(last.value);
  };
  // Reads template text from `at` (just after a backtick or a closing `}` of `${`) to its end or its next `${`.
  const template = (at) => {
    for (let j = at; j < text.length; j += 1) {
      if (text[j] === "\\") j += 1;
      else if (text[j] === "`") return j + 1;
      else if (text[j] === "$" && text[j + 1] === "{") {
        templateDepths.push(depth);
        depth += 1;
        return j + 2;
      }
    }
    return fail("template literal", at);
  };
  while (i < text.length) {
    const char = text[i];
    const start = i;
    if (/\s/.test(char)) i += 1;
    else if (char === "/" && text[i + 1] === "/") i = text.includes("\n", i) ? text.indexOf("\n", i) : text.length;
    else if (char === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) fail("comment", i);
      i = end + 2;
    } else if (char === '"' || char === "'") {
      let value = "";
      for (i += 1; text[i] !== char; i += 1) {
        if (i >= text.length || text[i] === "\n") fail("string", start);
        if (text[i] === "\\") i += 1;
        value += text[i];
      }
      i += 1;
      tokens.push({ type: "string", value, at: start });
    } else if (char === "`") {
      i = template(i + 1);
      tokens.push({ type: "template", value: "`", at: start });
    } else if (char === "}" && templateDepths.at(-1) === depth - 1) {
      templateDepths.pop();
      depth -= 1;
      i = template(i + 1);
    } else if (char === "/" && regexAllowed()) {
      let inClass = false;
      for (i += 1; inClass || text[i] !== "/"; i += 1) {
        if (i >= text.length || text[i] === "\n") fail("regular expression", start);
        if (text[i] === "\\") i += 1;
        else if (text[i] === "[") inClass = true;
        else if (text[i] === "]") inClass = false;
      }
      for (i += 1; /[a-z]/.test(text[i] ?? ""); i += 1);
      tokens.push({ type: "regex", value: "/", at: start });
    } else if (/[A-Za-z_$\u0080-\uffff]/.test(char)) {
      for (i += 1; /[\w$\u0080-\uffff]/.test(text[i] ?? ""); i += 1);
      tokens.push({ type: "name", value: text.slice(start, i), at: start });
    } else if (/\d/.test(char)) {
      for (i += 1; /[\w.]/.test(text[i] ?? ""); i += 1);
      tokens.push({ type: "number", value: text.slice(start, i), at: start });
    } else {
      if (char === "{") depth += 1;
      else if (char === "}") depth -= 1;
      i += 1;
      tokens.push({ type: "punct", value: char, at: start });
    }
  }
  if (templateDepths.length > 0) fail("template literal", text.length);
  return tokens.map((token) => ({ ...token, line: lineAt(token.at) }));
}

/** Whether `token` is of `type` (and, if given, has `value`). */
const is = (token, type, value) => token?.type === type && (value === undefined || token.value === value);

/**
 * Every module specifier of a tokenised module, `{ specifier, line }`, and every import it cannot read as one,
 * `{ problem, line }`: an `import()` or `require()` whose argument is not one string literal, a `require()`.
 */
export function importsOf(tokens) {
  const found = [];
  for (let k = 0; k < tokens.length; k += 1) {
    const token = tokens[k];
    if (token.type !== "name" || is(tokens[k - 1], "punct", ".")) continue;
    const next = tokens[k + 1];
    if (token.value === "require" && is(next, "punct", "(")) {
      found.push({ problem: "require(), which an ES module does not have", line: token.line });
    } else if (token.value === "import" && is(next, "punct", "(")) {
      const argument = tokens[k + 2];
      const literal = is(argument, "string") && (is(tokens[k + 3], "punct", ")") || is(tokens[k + 3], "punct", ","));
      if (literal) found.push({ specifier: argument.value, line: token.line });
      else found.push({ problem: "import() with a specifier that is not a string literal", line: token.line });
    } else if (token.value === "import" && !is(next, "punct", ".") && !is(next, "punct", ":")) {
      // `import "m"`, `import … from "m"`, `import x = require("m")` (the require is reported above).
      for (let j = k + 1; j < tokens.length && !is(tokens[j], "punct", ";"); j += 1) {
        if (is(tokens[j], "string") && (is(tokens[j - 1], "name", "from") || j === k + 1)) {
          found.push({ specifier: tokens[j].value, line: token.line });
          break;
        }
        if (is(tokens[j], "punct", "(") || is(tokens[j], "punct", "=")) break;
      }
    } else if (token.value === "export" && !is(next, "punct", ":")) {
      // `export * from "m"`, `export * as n from "m"`, `export { … } from "m"`, `export type { … } from "m"`.
      let j = k + 1;
      if (is(tokens[j], "name", "type")) j += 1;
      if (is(tokens[j], "punct", "*")) {
        j += 1;
        if (is(tokens[j], "name", "as")) j += 2;
      } else if (is(tokens[j], "punct", "{")) {
        while (j < tokens.length && !is(tokens[j], "punct", "}")) j += 1;
        j += 1;
      } else continue;
      if (is(tokens[j], "name", "from") && is(tokens[j + 1], "string")) {
        found.push({ specifier: tokens[j + 1].value, line: token.line });
      }
    }
  }
  return found;
}

/** The module a relative specifier names, as bundler resolution finds it (`./x.js` is x.ts, `./dir` dir/index.ts). */
function moduleAt(target) {
  const candidates = [
    target.replace(/\.[cm]?js$/, (ext) => ext.replace("js", "ts")),
    `${target}.ts`,
    join(target, "index.ts"),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile()) ?? target;
}

const problems = [];
const edges = new Map(); // "from -> to" => first example "file -> import"
const modules = new Map(); // "steps/engine.ts" => the src modules it imports
const publicIndex = join(srcDir, "index.ts");
const files = sourceFiles(srcDir);
const lineCounts = new Map();
for (const file of files) {
  const rel = relative(srcDir, file).split(sep).join("/");
  const text = readFileSync(file, "utf8");
  lineCounts.set(rel, text.split("\n").length - (text.endsWith("\n") ? 1 : 0));
  if (!file.endsWith(".ts") || file.endsWith(".d.ts")) {
    problems.push(`${rel} is not a .ts module (src/ holds TypeScript modules, which this check reads)`);
    continue;
  }
  if (/^\s*\/\/\/\s*<reference\s+path\s*=/m.test(text)) {
    problems.push(`${rel} has a /// <reference path>, which pulls a file in without an import`);
  }
  let found;
  try {
    found = importsOf(tokenize(text));
  } catch (error) {
    problems.push(`${rel} cannot be read: ${error.message}`);
    continue;
  }
  const from = layerOf(file);
  for (const { specifier, problem, line } of found) {
    const where = `${rel}:${line}`;
    if (problem) {
      problems.push(`${where} uses ${problem}`);
      continue;
    }
    if (!specifier.startsWith("./") && !specifier.startsWith("../") && specifier !== "." && specifier !== "..") {
      const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];
      if (/^(?:node|cloudflare):/.test(specifier)) continue;
      if (name === manifest.name) {
        problems.push(`${where} imports the package by its own name, ${specifier}, which resolves to src/`);
      } else if (/^(?:\/|\\|[A-Za-z]:[\\/]|file:)/.test(specifier)) {
        problems.push(`${where} imports ${specifier}, an absolute path`);
      } else if (!declared.has(name)) {
        problems.push(
          `${where} imports ${specifier}, which is neither a path inside src/ nor a dependency in package.json (an alias could resolve it into src/)`,
        );
      }
      continue;
    }
    // A relative specifier must stay inside src/ on its way: `../../src/x.js` from src/a/ leaves and comes back.
    let level = relative(srcDir, dirname(file)).split(sep).filter(Boolean).length;
    for (const segment of specifier.split("/")) {
      level += segment === ".." ? -1 : segment === "." || segment === "" ? 0 : 1;
      if (level < 0) break;
    }
    const target = moduleAt(resolve(dirname(file), specifier));
    if (level < 0) {
      problems.push(
        relative(srcDir, target).startsWith("..")
          ? `${where} imports ${specifier}, outside src/`
          : `${where} imports ${specifier}, a path that leaves src/ and comes back into it`,
      );
      continue;
    }
    if (target === publicIndex) {
      problems.push(
        `${where} imports ${specifier}, the public index (src/index.ts imports the library, not the reverse)`,
      );
      continue;
    }
    if (rel === "index.ts") continue;
    const imported = relative(srcDir, target).split(sep).join("/");
    modules.set(rel, [...(modules.get(rel) ?? []), imported]);
    const to = layerOf(target);
    if (to === from) continue;
    const sideDoor = SIDE_DOORS[imported];
    if (DOORS.includes(to) && imported !== `${to}/index.ts` && sideDoor?.from !== from) {
      problems.push(`${rel} imports ${specifier}: ${to}/ is reached only through ${to}/index.ts`);
    }
    const key = `${from} -> ${to}`;
    if (!edges.has(key)) edges.set(key, `${rel} imports ${specifier}`);
  }
}

// A tsconfig that maps specifiers could send a bare or absolute one into src/ past the checks above.
const tsconfigs = existsSync(dirname(srcDir))
  ? readdirSync(dirname(srcDir)).filter((name) => /^tsconfig.*\.json$/.test(name))
  : [];
const seenConfigs = new Set();
function checkTsconfig(path) {
  if (seenConfigs.has(path) || !existsSync(path)) return;
  seenConfigs.add(path);
  const text = readFileSync(path, "utf8");
  const mapping = text.match(/"(paths|baseUrl|rootDirs)"\s*:/);
  if (mapping)
    problems.push(`${relative(packageDir, path)} sets ${mapping[1]}, which can resolve a specifier into src/`);
  const extended = text.match(/"extends"\s*:\s*"(\.{1,2}\/[^"]+)"/);
  if (extended) checkTsconfig(resolve(dirname(path), extended[1]));
}
for (const name of tsconfigs) checkTsconfig(join(dirname(srcDir), name));

for (const [rel, lines] of lineCounts) {
  if (lines > MAX_LINES && !(rel in LONG_FILES)) {
    problems.push(
      `${rel} has ${lines} lines, over ${MAX_LINES}: split it at a seam, or name it in LONG_FILES with why it is one concern`,
    );
  }
}
for (const rel of Object.keys(LONG_FILES)) {
  const lines = lineCounts.get(rel);
  if (lines === undefined || lines <= MAX_LINES) {
    problems.push(
      `LONG_FILES names ${rel}, which ${lines === undefined ? "does not exist" : `has ${lines} lines`}: drop the entry`,
    );
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
  `check-layers: ${edges.size} folder edges, all pointing down (${LAYERS.join(" < ")}); ${files.length} modules, no import cycle, none over ${MAX_LINES} lines but the ${Object.keys(LONG_FILES).length} in LONG_FILES`,
);
