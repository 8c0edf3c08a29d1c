// Checks the public surface of the package's four entry points (`durable-mcp-server`, `durable-mcp-server/testing`,
// `durable-mcp-server/testing/mcp-client`, `durable-mcp-server/console`) against the reports committed in api/, and
// their documentation:
// 1. API Extractor (which reads the built declarations with the TypeScript it bundles, so the project's TypeScript 7
//    does not matter to it) writes each entry point's surface — every export with its kind and declared signature —
//    and fails when it differs from the committed api/*.api.md: a change to the surface is announced by updating the
//    report (`pnpm run api:update`) in the same commit as a changeset and docs/api.md.
// 2. Every export has a TSDoc comment with a summary and an `@example` (a ```ts fence), a function an `@param` for
//    each parameter and an `@returns` unless it returns nothing, a class with constructor parameters an `@param` for
//    each on its constructor.
// 3. Every `@example` typechecks: each is written to a module of its own under node_modules/.cache/ (importing the
//    package by its name, as a user does; inside the workspace that resolves to src/) and tsc checks them with the
//    package's compiler options. A compile error names the export whose example it is.
// CI runs it in the package's `lint` target, after `build` (it reads dist/); scripts/check-api.test.mjs plants a new
// export, an undocumented one and a broken example in a copy of dist/ and expects each to fail.
// `node scripts/check-api.mjs [--update] [--dist <dir>]`.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const update = args.includes("--update");
const distArg = args.indexOf("--dist");
const distDir = resolve(distArg >= 0 ? args[distArg + 1] : join(packageDir, "dist"));
const reportDir = join(packageDir, "api");

/** The entry points of package.json's `exports`, each with the report that records its surface. */
export const ENTRY_POINTS = [
  { name: "durable-mcp-server", dts: "index.d.ts", report: "durable-mcp-server.api.md" },
  { name: "durable-mcp-server/testing", dts: "testing/index.d.ts", report: "durable-mcp-server-testing.api.md" },
  {
    name: "durable-mcp-server/testing/mcp-client",
    dts: "testing/mcp-client.d.ts",
    report: "durable-mcp-server-testing-mcp-client.api.md",
  },
  { name: "durable-mcp-server/console", dts: "console/index.d.ts", report: "durable-mcp-server-console.api.md" },
];

const work = mkdtempSync(join(tmpdir(), "check-api-"));
// API Extractor reads the declarations in the context of a package folder (package.json, node_modules); a --dist
// elsewhere is given one.
let projectDir = packageDir;
if (distArg >= 0) {
  projectDir = join(work, "package");
  mkdirSync(projectDir);
  cpSync(join(packageDir, "package.json"), join(projectDir, "package.json"));
  cpSync(distDir, join(projectDir, "dist"), { recursive: true });
  symlinkSync(join(packageDir, "node_modules"), join(projectDir, "node_modules"));
}

const problems = [];
if (!existsSync(join(distDir, "index.d.ts"))) {
  console.error(
    `check-api: no ${join(distDir, "index.d.ts")}: build first (\`pnpm run build\`; nx's lint depends on it)`,
  );
  process.exit(1);
}
const examples = []; // { entry, name, code }
mkdirSync(reportDir, { recursive: true });
for (const entry of ENTRY_POINTS) {
  const apiJson = join(work, `${entry.report}.json`);
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: projectDir,
      mainEntryPointFilePath: join(projectDir, "dist", entry.dts),
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: "es2023",
            lib: ["es2023"],
            module: "es2022",
            moduleResolution: "bundler",
            strict: true,
            skipLibCheck: true,
            types: ["@cloudflare/workers-types"],
          },
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.report,
        reportFolder: reportDir,
        reportTempFolder: join(work, "reports"),
      },
      docModel: { enabled: true, apiJsonFilePath: apiJson },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: "warning" } },
        extractorMessageReporting: {
          default: { logLevel: "warning" },
          // Release tags (@public, @beta) are not used: everything an entry point exports is public.
          "ae-missing-release-tag": { logLevel: "none" },
          // A type the surface names but does not export is listed in the report, not refused.
          "ae-forgotten-export": { logLevel: "none", addToApiReportFile: true },
          // Members are documented where they need it; the export itself always (checked below).
          "ae-undocumented": { logLevel: "none", addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: "warning" } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: join(projectDir, "package.json"),
  });
  const messages = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    messageCallback(message) {
      message.handled = true;
      // The report's difference is reported once, below, with what to do about it.
      if (message.messageId.startsWith("console-api-report-")) return;
      if (message.logLevel === "warning" || message.logLevel === "error") {
        messages.push(
          `${message.text} (${message.messageId}${message.sourceFilePath ? `, ${message.sourceFilePath}:${message.sourceFileLine}` : ""})`,
        );
      }
    },
  });
  for (const message of messages) problems.push(`${entry.name}: ${message}`);
  if (result.apiReportChanged && !update) {
    problems.push(
      `${entry.name}: the public surface differs from api/${entry.report} (${join(work, "reports", entry.report)} is the new one): a change to it is announced — run \`pnpm run api:update\`, commit the report with a changeset and docs/api.md`,
    );
  } else if (!result.succeeded && messages.length === 0) problems.push(`${entry.name}: API Extractor failed`);
  if (existsSync(apiJson)) checkDocs(entry, JSON.parse(readFileSync(apiJson, "utf8")));
}

/** Checks the TSDoc of every export of one entry point and collects its examples. */
function checkDocs(entry, model) {
  const members = model.members?.[0]?.members ?? [];
  for (const item of members) {
    const where = `${entry.name}: ${item.name}`;
    const doc = item.docComment ?? "";
    const summary = doc
      .replace(/^\/\*\*|\*\/$/g, "")
      .replace(/^\s*\*/gm, "")
      .split(/\n\s*@/)[0]
      .trim();
    if (!summary) problems.push(`${where} has no TSDoc summary`);
    const fences = [...doc.matchAll(/@example[\s\S]*?```ts\n([\s\S]*?)```/g)].map((match) =>
      match[1].replace(/^\s*\* ?/gm, ""),
    );
    if (!/@example/.test(doc)) problems.push(`${where} has no @example`);
    else if (fences.length === 0) problems.push(`${where}: its @example has no \`\`\`ts fence`);
    fences.forEach((code, n) => examples.push({ entry, name: item.name, n, code }));
    const needParams = (owner, label) => {
      // A destructured parameter (`{ tasks, ...options }`) has no name a tag could give; its type documents it.
      for (const parameter of (owner.parameters ?? []).filter((each) => /^\w+$/.test(each.parameterName))) {
        if (!new RegExp(`@param ${parameter.parameterName}\\b`).test(owner.docComment ?? "")) {
          problems.push(`${where}: ${label} has no @param ${parameter.parameterName}`);
        }
      }
    };
    if (item.kind === "Function") {
      needParams(item, "the function");
      const returns = item.excerptTokens
        .slice(item.returnTypeTokenRange.startIndex, item.returnTypeTokenRange.endIndex)
        .map((token) => token.text)
        .join("")
        .trim();
      if (!/^(?:void|Promise<void>)$/.test(returns) && !/@returns/.test(doc)) {
        problems.push(`${where} returns ${returns} but has no @returns`);
      }
    }
    if (item.kind === "Class") {
      for (const constructor of (item.members ?? []).filter((member) => member.kind === "Constructor")) {
        needParams(constructor, "its constructor");
      }
    }
  }
}

// The examples, each a module importing the package as a user does, checked by the project's own tsc.
const examplesDir = join(packageDir, "node_modules", ".cache", `api-examples-${process.pid}`);
mkdirSync(examplesDir, { recursive: true });
const fileOf = new Map();
for (const [i, example] of examples.entries()) {
  // Numbered: two exports may differ only in case (durableMcp, DurableMcp), and file systems may not tell them apart.
  const file = `${i}-${example.entry.name.replace(/\W+/g, "-")}--${example.name}${example.n ? `-${example.n + 1}` : ""}.ts`;
  fileOf.set(file, example);
  writeFileSync(join(examplesDir, file), `${example.code}\nexport {};\n`);
}
writeFileSync(
  join(examplesDir, "tsconfig.json"),
  JSON.stringify({
    extends: join(packageDir, "tsconfig.json"),
    compilerOptions: { noEmit: true, noUnusedLocals: false },
    include: ["*.ts"],
  }),
);
if (examples.length > 0) {
  const tsc = join(
    dirname(createRequire(join(packageDir, "package.json")).resolve("typescript/package.json")),
    "bin",
    "tsc",
  );
  try {
    // --pretty false: the `file(line,col): error` form read below, also where the environment asks for colour
    // (nx sets FORCE_COLOR, and tsc then prints `file:line:col - error`).
    execFileSync(process.execPath, [tsc, "-p", join(examplesDir, "tsconfig.json"), "--pretty", "false"], {
      encoding: "utf8",
      stdio: "pipe",
    });
  } catch (error) {
    const output = `${error.stdout ?? ""}${error.stderr ?? ""}`;
    const failed = new Set();
    for (const line of output.split("\n")) {
      const file = line.match(/([\w.-]+\.ts)\(\d+,\d+\)/)?.[1];
      if (file && fileOf.has(file)) {
        failed.add(file);
        const example = fileOf.get(file);
        problems.push(
          `${example.entry.name}: the @example of ${example.name} does not compile: ${line.replace(/^.*?\.ts/, file)}`,
        );
      }
    }
    if (failed.size === 0) problems.push(`the @example modules do not compile:\n${output}`);
  }
}
rmSync(examplesDir, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });

if (problems.length > 0) {
  console.error(`check-api: ${problems.length} problem(s)`);
  for (const problem of problems) console.error(`  ${problem}`);
  process.exit(1);
}
console.log(
  `check-api: ${ENTRY_POINTS.length} entry points ${update ? "written to" : "match"} api/, every export documented, ${examples.length} examples compile`,
);
