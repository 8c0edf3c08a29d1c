// Bench-only instrumentation of a TaskRunner class: a subclass that counts what the Durable Objects platform bills —
// objects brought up, calls into them (RPC and alarm deliveries), `setAlarm`, SQLite rows written — for
// `pnpm bench:pool-cost` (docs/performance.md, "The runner pool at low traffic"). Only the bench server's
// /mcp-counted endpoint uses it; the library and every other endpoint run without it, so the production path pays
// nothing for it. The counts live in the isolate, which under `wrangler dev` runs the Worker and every object, and
// are read and reset through /bench/counts.

/** The RPC methods a TaskRunner serves (runner/task-runner-rpc.ts), counted per call. */
const RPC_METHODS = [
  "prepare",
  "create",
  "get",
  "getText",
  "update",
  "cancel",
  "inspect",
  "awaitSettled",
  "watch",
  "sendEvent",
  "deliverWebhook",
] as const;

interface ObjectCounts {
  /** When its armed alarm is due (set by setAlarm, cleared by a delivery, deleteAlarm or deleteAll). */
  armedAt: number | undefined;
  /** Whether a `prepare` reached it: a create that follows was served by a pre-created runner. */
  prepared: boolean;
}

const objects = new Map<string, ObjectCounts>();
const calls = new Map<string, number>();
let constructed = 0;
let setAlarms = 0;
let alarmDeliveries = 0;
let deleteAlls = 0;
let kvWrites = 0;
/** Creates that reached an object a `prepare` had made: the pool served them. */
let preparedCreates = 0;
/** Every SQL cursor the counted objects opened: their rowsWritten are summed when read (a cursor counts as it runs). */
let cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];

const bump = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);

/** What /bench/counts answers: totals since the last reset. */
export function countsSnapshot() {
  let sqlRowsWritten = 0;
  for (const cursor of cursors) sqlRowsWritten += cursor.rowsWritten;
  let armed = 0;
  for (const object of objects.values()) if (object.armedAt !== undefined) armed++;
  return {
    objects: objects.size,
    constructed,
    calls: Object.fromEntries(calls),
    alarmDeliveries,
    setAlarms,
    /** Objects whose alarm is armed now: each is one more delivery to come (a purge, or an unclaimed runner's end). */
    armed,
    deleteAlls,
    /** Rows written as billed: SQL rows (cursor.rowsWritten), KV writes, and one per setAlarm. */
    rowsWritten: sqlRowsWritten + kvWrites + setAlarms,
    sqlRowsWritten,
    kvWrites,
    preparedCreates,
  };
}

export function resetCounts(): void {
  objects.clear();
  calls.clear();
  constructed = setAlarms = alarmDeliveries = deleteAlls = kvWrites = preparedCreates = 0;
  cursors = [];
}

/**
 * Makes the object's storage count its writes: its own `setAlarm`, `deleteAlarm`, `deleteAll`, `sql.exec` and
 * `kv.put`/`kv.delete` replaced on this object's instances (the runtime refuses a stand-in for the state itself).
 */
function countStorage(ctx: DurableObjectState, object: ObjectCounts): void {
  const storage = ctx.storage;
  const sql = storage.sql;
  const exec = sql.exec.bind(sql);
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    const cursor = exec(query, ...bindings);
    cursors.push(cursor);
    return cursor;
  }) as typeof sql.exec;
  const kv = storage.kv;
  const put = kv.put.bind(kv);
  const remove = kv.delete.bind(kv);
  kv.put = ((key: string, value: unknown) => {
    kvWrites++;
    return put(key, value);
  }) as typeof kv.put;
  kv.delete = ((key: string) => {
    kvWrites++;
    return remove(key);
  }) as typeof kv.delete;
  const setAlarm = storage.setAlarm.bind(storage);
  storage.setAlarm = (at, options) => {
    setAlarms++;
    object.armedAt = typeof at === "number" ? at : at.getTime();
    return setAlarm(at, options);
  };
  const deleteAlarm = storage.deleteAlarm.bind(storage);
  storage.deleteAlarm = (options) => {
    object.armedAt = undefined;
    return deleteAlarm(options);
  };
  const deleteAll = storage.deleteAll.bind(storage);
  storage.deleteAll = (options) => {
    deleteAlls++;
    object.armedAt = undefined;
    return deleteAll(options);
  };
  if (ctx.storage !== storage || storage.sql !== sql || storage.kv !== kv) {
    throw new Error("counted-runner: the storage objects are not stable; the counts would miss writes");
  }
}

type RunnerClass = new (ctx: DurableObjectState, env: never) => object;

/** `Base` with every object it brings up, every call into it and every write of its storage counted. */
export function countedTaskRunner<C extends RunnerClass>(Base: C): C {
  const counted = class extends (Base as RunnerClass) {
    constructor(ctx: DurableObjectState, env: never) {
      const id = ctx.id.toString();
      let object = objects.get(id);
      if (!object) objects.set(id, (object = { armedAt: undefined, prepared: false }));
      constructed++;
      countStorage(ctx, object);
      super(ctx, env);
    }
  };
  const base = Base.prototype as Record<string, (...args: unknown[]) => unknown>;
  for (const name of RPC_METHODS) {
    Object.defineProperty(counted.prototype, name, {
      value: function (this: { ctx: DurableObjectState }, ...args: unknown[]) {
        bump(name);
        if (name === "prepare" || name === "create") {
          const object = objects.get(this.ctx.id.toString());
          if (object && name === "prepare") object.prepared = true;
          else if (object?.prepared) preparedCreates++;
        }
        return base[name]!.apply(this, args);
      },
      writable: true,
      configurable: true,
    });
  }
  Object.defineProperty(counted.prototype, "alarm", {
    value: function (this: { ctx: DurableObjectState }, ...args: unknown[]) {
      alarmDeliveries++;
      const object = objects.get(this.ctx.id.toString());
      if (object) object.armedAt = undefined;
      return base.alarm!.apply(this, args);
    },
    writable: true,
    configurable: true,
  });
  return counted as unknown as C;
}
