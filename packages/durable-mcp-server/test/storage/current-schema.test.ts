// A new object's database is made by its schema's `current` script in one go; an existing one goes through the
// migrations. Both paths run here on real SQLite-backed objects and must leave the same database, so `current` and
// the migrations cannot drift apart (storage/migrations.ts, `applySchema`).
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { FileRunnerRpc } from "../../src/file-runner/file-runner-rpc.js";
import { FILE_SCHEMA } from "../../src/file-runner/file-store.js";
import { newFileHandle, newTaskId } from "../../src/ids.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { SCHEMA_VERSION, TASK_RUNNER_SCHEMA } from "../../src/runner/schema.js";
import {
  applyMigrations,
  applySchema,
  latestVersion,
  schemaVersion,
  type VersionedSchema,
} from "../../src/storage/migrations.js";
import { fixtureEnv, fixtureTask, isFinal, waitForTask } from "../helpers.js";

/**
 * One statement's SQL as SQLite keeps it, up to layout: `ALTER TABLE … ADD COLUMN` splices text into the stored
 * CREATE, and `RENAME TO` quotes the new name, neither of which changes what the statement means.
 */
const normalise = (sql: string | null) =>
  sql === null
    ? null
    : sql
        .replace(/"(\w+)"/g, "$1")
        .replace(/\s+/g, " ")
        .replace(/\s*([(),])\s*/g, "$1")
        .trim();

interface MasterRow extends Record<string, SqlStorageValue> {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/**
 * Everything a schema leaves in a database: every table, index and trigger, the ledger, and every row. `upTo` is the
 * schema's latest version: both paths stamp versions 1 to it with the one time they ran at.
 */
function databaseOf(sql: SqlStorage, upTo: number) {
  const objects = sql
    .exec<MasterRow>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name",
    )
    .toArray()
    .map((row) => ({ ...row, sql: normalise(row.sql) }));
  const ledger = sql
    .exec<{ version: number; applied_at: number }>("SELECT version, applied_at FROM schema_migrations ORDER BY version")
    .toArray();
  const rows = Object.fromEntries(
    objects
      .filter((object) => object.type === "table" && object.name !== "schema_migrations")
      .map((table) => [table.name, sql.exec(`SELECT * FROM "${table.name}"`).toArray()]),
  );
  return {
    version: schemaVersion(sql),
    objects,
    ledger: ledger.map((row) => row.version),
    stampedOnce: new Set(ledger.filter((row) => row.version <= upTo).map((row) => row.applied_at)).size === 1,
    rows,
  };
}

/** A fresh object's storage (an untouched TaskRunner or FileRunner creates no tables until it is written to). */
function freshObject(binding: "TASK_RUNNER" | "FILE_RUNNER") {
  const namespace = fixtureEnv[binding] as DurableObjectNamespace;
  return namespace.get(namespace.idFromName(`schema-${newTaskId()}`));
}

async function bothPaths(
  binding: "TASK_RUNNER" | "FILE_RUNNER",
  schema: VersionedSchema,
  after?: (storage: DurableObjectStorage) => void,
) {
  const run = (apply: (storage: DurableObjectStorage) => void) =>
    runInDurableObject(freshObject(binding), (_, state) => {
      expect(schemaVersion(state.storage.sql)).toBe(0);
      apply(state.storage);
      after?.(state.storage);
      return databaseOf(state.storage.sql, latestVersion(schema));
    });
  return {
    oneScript: await run((storage) => applySchema(storage, schema, 0)),
    everyMigration: await run((storage) => applyMigrations(storage, schema.migrations, 0)),
  };
}

const cases = [
  { what: "TaskRunner", binding: "TASK_RUNNER", schema: TASK_RUNNER_SCHEMA },
  { what: "FileRunner", binding: "FILE_RUNNER", schema: FILE_SCHEMA },
] as const;

describe.each(cases)("$what: a new object at the current schema in one script", ({ binding, schema }) => {
  it("leaves the same tables, indexes, ledger and rows as every migration from 0", async () => {
    const { oneScript, everyMigration } = await bothPaths(binding, schema);
    const latest = latestVersion(schema);
    expect(oneScript.version).toBe(latest);
    expect(oneScript.ledger).toEqual(Array.from({ length: latest }, (_, index) => index + 1));
    expect(oneScript.stampedOnce).toBe(true);
    // Not vacuous: the current script made every table the migrations make.
    expect(oneScript.objects.filter((object) => object.type === "table").length).toBeGreaterThan(1);
    expect(oneScript).toEqual(everyMigration);
  });

  it("takes a later migration exactly as a database that went through every one", async () => {
    // A migration of each kind a future version may bring: a column added, and a table rebuilt in place.
    const table = binding === "TASK_RUNNER" ? "task" : "file";
    const next = `ALTER TABLE ${table} ADD COLUMN next_version TEXT;
      CREATE TABLE rebuilt (id INTEGER PRIMARY KEY, note TEXT);
      INSERT INTO rebuilt (id, note) VALUES (1, 'carried');
      CREATE TABLE rebuilt_next (id INTEGER PRIMARY KEY, note TEXT NOT NULL);
      INSERT INTO rebuilt_next SELECT id, note FROM rebuilt;
      DROP TABLE rebuilt;
      ALTER TABLE rebuilt_next RENAME TO rebuilt;
      CREATE INDEX rebuilt_note ON rebuilt (note);`;
    const latest = latestVersion(schema);
    const { oneScript, everyMigration } = await bothPaths(binding, schema, (storage) =>
      applyMigrations(storage, [...schema.migrations, next], schemaVersion(storage.sql)),
    );
    expect(oneScript.version).toBe(latest + 1);
    expect(oneScript.rows.rebuilt).toEqual([{ id: 1, note: "carried" }]);
    expect(oneScript).toEqual(everyMigration);
  });
});

/** A new TaskRunner's database brought from 0 to `to` by `applySchema`. */
const taskRunnerUpTo = (to: number) =>
  runInDurableObject(freshObject("TASK_RUNNER"), (_, state) => {
    applySchema(state.storage, TASK_RUNNER_SCHEMA, 0, to);
    return databaseOf(state.storage.sql, to);
  });

describe("TaskRunner schema", () => {
  it("is at SCHEMA_VERSION; a range short of the latest still goes through the migrations", async () => {
    expect(SCHEMA_VERSION).toBe(latestVersion(TASK_RUNNER_SCHEMA));
    const partial = await taskRunnerUpTo(SCHEMA_VERSION - 1);
    expect(partial.version).toBe(SCHEMA_VERSION - 1);
    expect(partial.ledger).toEqual(Array.from({ length: SCHEMA_VERSION - 1 }, (_, index) => index + 1));
    // The current script was not run: the last migration's change is not there yet.
    expect(partial.objects).not.toEqual((await taskRunnerUpTo(SCHEMA_VERSION)).objects);
  });
});

/** What sqlite_master holds, as stored: a database the migrations made keeps their spliced and renamed text. */
const storedSql = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_, state) =>
    state.storage.sql
      .exec<{ sql: string }>(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name != 'schema_migrations'",
      )
      .toArray()
      .map((row) => row.sql),
  );
const statementsOf = (schema: VersionedSchema) =>
  schema.current
    .split(";")
    .map((statement) => statement.trim())
    .filter(Boolean);

describe("the objects' own entry points", () => {
  it("a task created on a new TaskRunner gets the current script's tables, verbatim", async () => {
    const taskId = newTaskId();
    const stub = freshObject("TASK_RUNNER") as DurableObjectStub & TaskRunnerRpc;
    await stub.create(fixtureTask(taskId, "three_steps"));
    expect((await storedSql(stub)).toSorted()).toEqual(statementsOf(TASK_RUNNER_SCHEMA).toSorted());
    // The task runs on it to its end (and leaves nothing running after the test).
    expect((await waitForTask({ stub, access: { taskId, principal: "alice" } }, isFinal)).status).toBe("completed");
  });

  it("a file created on a new FileRunner gets the current script's tables, verbatim", async () => {
    const handle = newFileHandle();
    const namespace = fixtureEnv.FILE_RUNNER as DurableObjectNamespace;
    const stub = namespace.get(namespace.idFromName(handle)) as DurableObjectStub & FileRunnerRpc;
    const created = await stub.create({
      handle,
      principal: "alice",
      name: "a.txt",
      mimeType: "text/plain",
      size: 3,
      sha256: null,
      ttlMs: 60_000,
    });
    expect(created).toMatchObject({ handle, state: "uploading" });
    expect((await storedSql(stub)).toSorted()).toEqual(statementsOf(FILE_SCHEMA).toSorted());
  });
});
