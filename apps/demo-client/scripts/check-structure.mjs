// The demo's structure, checked in its lint (issue 16): small parts, imports that point one way, one MCP client.
// - No source file of src/, shared/ or agent/ is over MAX_LINES lines; no React component (a top-level function
//   of a .tsx file named with a capital) over MAX_COMPONENT_LINES: split it along its seams.
// - No top-level `let` in the page (src/): a module-level variable is state shared by every render and every
//   session; the page's state lives in React (state, context, a store made per session).
// - shared/ imports nothing from src/ or agent/; agent/ nothing from src/ (the page); src/ nothing from agent/
//   (the page reaches its agent over the WebSocket, never by importing it).
// - No file frames MCP requests by hand: the MCP headers are the raw client's (durable-mcp-server/testing/mcp-client).
// - package.json lists @modelcontextprotocol/client only if something imports it.
// Usage: node scripts/check-structure.mjs [package root]   (default: this script's package)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const MAX_LINES = 400;
const MAX_COMPONENT_LINES = 100;
const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), ".."));
const folders = ["src", "shared", "agent"];
/** Which folders each folder may import from (besides itself and packages). */
const allowed = { src: ["shared"], shared: [], agent: ["shared"] };
const handFramed = /["']mcp-(protocol-version|method|name)["']/i;

function sources(dir) {
  let found = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return found;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found = found.concat(sources(path));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name)) found.push(path);
  }
  return found;
}

/** The top-level components of a formatted .tsx file: from `function Name(` at the start of a line to its `}`. */
function componentsOf(text) {
  const found = [];
  let open;
  text.split("\n").forEach((line, index) => {
    const start = /^(?:export\s+)?(?:default\s+)?function\s+([A-Z]\w*)/.exec(line);
    if (start) open = { name: start[1], from: index };
    else if (open && line === "}") {
      found.push({ name: open.name, lines: index - open.from + 1 });
      open = undefined;
    }
  });
  return found;
}

const problems = [];
let sdkClientImported = false;
for (const folder of folders) {
  for (const file of sources(join(root, folder))) {
    const name = relative(root, file);
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines > MAX_LINES) problems.push(`${name}: ${lines} lines (at most ${MAX_LINES}: split it)`);
    if (name.endsWith(".tsx")) {
      for (const component of componentsOf(text)) {
        if (component.lines > MAX_COMPONENT_LINES) {
          problems.push(
            `${name}: component ${component.name} is ${component.lines} lines (at most ${MAX_COMPONENT_LINES}: split it)`,
          );
        }
      }
    }
    if (folder === "src" && /^(export\s+)?let\s/m.test(text)) {
      problems.push(`${name}: a module-level \`let\` (keep the page's state in React or a per-session store)`);
    }
    if (handFramed.test(text)) {
      problems.push(`${name}: frames MCP requests by hand (send them with durable-mcp-server/testing/mcp-client)`);
    }
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      const specifier = match[1];
      if (specifier.startsWith("@modelcontextprotocol/client")) sdkClientImported = true;
      if (!specifier.startsWith(".")) continue;
      const target = relative(root, resolve(dirname(file), specifier)).split(sep)[0];
      if (target !== folder && folders.includes(target) && !allowed[folder].includes(target)) {
        problems.push(
          `${name}: imports ${specifier} (${folder}/ may import from ${allowed[folder].join(", ") || "no other folder"})`,
        );
      }
    }
  }
}
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const declared = { ...pkg.dependencies, ...pkg.devDependencies };
if ("@modelcontextprotocol/client" in declared && !sdkClientImported) {
  problems.push("package.json: @modelcontextprotocol/client is declared but nothing imports it");
}

if (problems.length > 0) {
  console.error(`check-structure: ${problems.length} problem(s) in ${root}:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`check-structure: ${folders.join("/, ")}/ are small, point one way and share one MCP client`);
