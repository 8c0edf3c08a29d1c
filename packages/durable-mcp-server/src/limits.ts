// Every numeric limit of the runtime in one place (docs/limits.md says what happens at each). A root module, so the
// lowest layer but util/: any folder may read it. What is here bounds input, storage or fan-out; defaults that are
// durations or policies (ttl, poll interval, waitFor, retry policy, files.ttl) stay with the option they default.
import { DEFAULT_MAX_REQUEST_BODY_SIZE } from "@modelcontextprotocol/server";

const MIB = 1024 * 1024;

// --- Requests (routing/, wire/json-body.ts) ---
/** Largest JSON request body, in bytes: the SDK's own default bound (4 MiB), applied on every path. */
export const MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE;
/** Deepest JSON nesting accepted in a request body (the root object or array is level 1). */
export const MAX_JSON_DEPTH = 64;
/** Task ids one `subscriptions/listen` may name (duplicates and malformed ids included). */
export const MAX_LISTEN_TASK_IDS = 100;
/** TaskRunner calls a listen makes at a time while it opens its tasks' streams. */
export const LISTEN_CONCURRENCY = 8;
/** An idempotency key (`_meta` of `tools/call`) is 1 to this many characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/**
 * The largest `inline` budget of a task (registerTask): a task-capable call waits at most this long for an inline
 * result before it gets its task. Short on purpose: a longer wait is what polling the task is for.
 */
export const MAX_INLINE_MS = 10_000;
/** Schema issues listed in `details.issues` of an `invalid_arguments` envelope; the rest are counted. */
export const MAX_LISTED_ISSUES = 10;

// --- Steps and the journal (steps/, runner/) ---
/** Step results (and input answers, per key) are capped like Cloudflare Workflows', under SQLite's 2 MB row. */
export const MAX_STEP_RESULT_BYTES = MIB;
/** With a bucket to spill to, larger results go to R2 instead, up to this (they are held in memory on replay). */
export const MAX_SPILLED_RESULT_BYTES = 32 * MIB;
/**
 * Largest task history (`mcp.exportHistory`, `replayHistory`), in UTF-8 bytes of its JSON: the export includes spilled
 * results inline, so a history past this is refused (under the 32 MiB of a Workers RPC message).
 */
export const MAX_HISTORY_BYTES = 16 * MIB;
/** A step name is 1 to this many characters. */
export const MAX_STEP_NAME_LENGTH = 256;
/**
 * A run that keeps going without I/O (steps whose bodies only compute) yields to its object's event loop after
 * this many new steps or this long, whichever comes first, so that a `tasks/get` (or cancel, answer, event) sent
 * meanwhile is answered between steps instead of after the run. The step count bounds it where the clock stands
 * still during CPU work (deployed Workers); the time bounds it where steps are slow. 2,500 steps that return at once
 * are about RUN_YIELD_MS of work since a step costs ≈ 4 µs (docs/performance.md, "Step engine, round 3"; 1,000 when
 * it cost ≈ 10 µs): each yield is a timer turn and a commit, so a shorter chunk only adds yields.
 */
export const RUN_YIELD_STEPS = 2500;
export const RUN_YIELD_MS = 10;
/**
 * A yield that took this long or more (a bare timer turn and the commit take ~1–3 ms) let other work run on the
 * object's thread; the run then yields every RUN_YIELD_SHARED_MS for RUN_YIELD_SHARED_HOLD_MS after it, so that a request
 * crossing several hops on that thread (locally: the entry worker, the Worker, the object) waits a short chunk at
 * each.
 */
export const RUN_YIELD_SHARED_GAP_MS = 4;
export const RUN_YIELD_SHARED_MS = 2;
export const RUN_YIELD_SHARED_HOLD_MS = 250;
/** Step timeline entries a `tasks/get` returns under `STEPS_META` (the latest ones). */
export const TIMELINE_LIMIT = 500;
/**
 * A TaskRunner keeps its task row and last `tasks/get` answer in memory unless the result and error together are
 * longer than this (UTF-16 characters): a result may be up to the 2 MB a SQLite row holds, and objects share an
 * isolate's memory. A longer one is read from SQLite on every get.
 */
export const MAX_KEPT_RESULT_CHARS = 64 * 1024;
/** Attempts of one `do` step kept in its history (the newest; older ones are overwritten, the count stays exact). */
export const MAX_STEP_ATTEMPTS_KEPT = 20;
/** Runs in a row that fail outside the handler before the task ends `failed` (`runtime_error`). */
export const MAX_RUN_FAILURES = 3;
/** How long the testing seam waits for a run under way before it gives up. */
export const SEAM_RUN_WAIT_MS = 10_000;

// --- The create path (runner/, routing/; docs/limits.md, "Pre-created runners") ---
/** A prepared TaskRunner that no create claimed deletes its storage this long after it was prepared. */
export const PREPARED_RUNNER_TTL_MS = 5 * 60_000;
/**
 * A Worker isolate hands out a prepared task id while it is younger than this: a minute before its runner deletes
 * itself (an older one is dropped; creating on a runner that did delete itself would still be safe, only slower).
 */
export const PREPARED_RUNNER_MAX_AGE_MS = PREPARED_RUNNER_TTL_MS - 60_000;
/**
 * A Worker isolate keeps as many prepared TaskRunners per endpoint as creates are expected within this long, at its
 * create rate of the last PREPARED_RUNNER_RATE_WINDOW_MS (rounded): none below 2.5 creates a second, so that a runner
 * is prepared only to be claimed well inside FIRST_RUN_FALLBACK_MS of its `prepare` (its alarm then is the task's own
 * fallback), and enough above it to cover the creates that arrive while a refill is under way.
 */
export const PREPARED_RUNNER_LEAD_MS = 200;
/** The creates an isolate counts for its rate (PREPARED_RUNNER_LEAD_MS). */
export const PREPARED_RUNNER_RATE_WINDOW_MS = 10_000;
/**
 * The most prepared TaskRunners a Worker isolate keeps ready per endpoint, however high its create rate. Bounds what
 * an isolate leaves behind when its creates stop: at most this many unclaimed runners per endpoint (each a
 * schema-only database and one alarm), each deleting itself PREPARED_RUNNER_TTL_MS after it was prepared; none is
 * prepared while no create comes.
 */
export const PREPARED_RUNNER_POOL_MAX = 32;
/**
 * A refill starts this long after the create that asked for it, one at a time per isolate, so that creating the new
 * objects never shares the reply's way out (docs/performance.md, "Create path, round 3").
 */
export const PREPARED_RUNNER_REFILL_DELAY_MS = 50;
/**
 * A task's first run is started by its TaskRunner right after the create has committed; the alarm is armed this far
 * ahead as the durable fallback (an instance that dies before starting the run leaves it to the alarm).
 */
export const FIRST_RUN_FALLBACK_MS = 1_000;

// --- Files (files/) ---
/** `files.maxSize` when not given. */
export const DEFAULT_MAX_FILE_BYTES = 4 * 1024 * MIB;
/** Bytes per `file_upload_write` chunk and per `file_download_read`. */
export const TOOL_CHUNK_BYTES = MIB;
/** R2 multipart rules: parts of at least 5 MiB, all equal but the last, at most 10,000 of them. */
export const MIN_PART_BYTES = 5 * MIB;
export const MAX_PARTS = 10_000;
/**
 * A tus PATCH holds its upload's write lease while it streams; one whose writer committed and renewed nothing for
 * this long (its Worker died mid-body) lapses, so the next PATCH can go on from the last committed offset.
 */
export const UPLOAD_LEASE_MS = 60_000;

// --- The 2025-11-25 tasks wire (routing/wire-2025/; docs/limits.md, "The 2025-11-25 tasks wire") ---
/** A signed session id stays valid this long after `initialize`; afterwards it is treated as no session. */
export const SESSION_TTL_MS = 24 * 60 * 60_000;
/** Declared client capabilities kept in a session id; larger ones are cut down to the kinds a task can use. */
export const MAX_SESSION_CAPABILITIES_BYTES = 2048;
/** Tasks a `tasks/list` page holds. */
export const LIST_PAGE_SIZE = 50;
/** TaskRunner reads a `tasks/list` page makes at a time. */
export const LIST_CONCURRENCY = 8;
/**
 * An index entry whose task does not exist is a create still on its way for this long after it was indexed (the
 * listing skips it) and a create that failed after that (the listing drops it). A create reaches its TaskRunner
 * within seconds of its index write (RunnerClient's retries), so this is far past any create still to land.
 */
export const INDEX_PENDING_MS = 10 * 60_000;
/** How often an open `tasks/result` stream sends progress (or a keep-alive comment without a progressToken). */
export const RESULT_HEARTBEAT_MS = 15_000;

// --- External events (steps/ waitForEvent, runner/event-inbox.ts, routing/webhook-routes.ts) ---
/** An event type is 1 to this many characters (as in Cloudflare Workflows). */
export const MAX_EVENT_TYPE_LENGTH = 100;
/** Largest event payload, as JSON text in bytes: `sendEvent`'s payload and a webhook POST's body alike. */
export const MAX_EVENT_PAYLOAD_BYTES = 256 * 1024;
/** Events of one type a live task keeps until a wait takes them; one more is refused (`buffer_full`). */
export const MAX_BUFFERED_EVENTS_PER_TYPE = 100;
/** Events of all types a live task keeps at once; one more is refused (`buffer_full`). */
export const MAX_BUFFERED_EVENTS = 1000;

// The task catalog and the operator API (design/operations.md, docs/operations.md).
/** Author-declared tags per task, and the longest tag key and value (longer ones are refused, not cut). */
export const MAX_TASK_TAGS = 16;
export const MAX_TAG_KEY_LENGTH = 64;
export const MAX_TAG_VALUE_LENGTH = 256;
/** A runner's catalog write that failed is tried again this many times, backing off from CATALOG_RETRY_MS. */
export const CATALOG_WRITE_ATTEMPTS = 4;
export const CATALOG_RETRY_MS = 500;
/** A status message is kept in the catalog up to this many characters (the runner keeps it whole). */
export const MAX_CATALOG_MESSAGE_LENGTH = 1024;
/** Operator list pages: the default and the largest page; the longest text filter. */
export const OPERATOR_PAGE_SIZE = 50;
export const MAX_OPERATOR_PAGE_SIZE = 500;
export const MAX_OPERATOR_TEXT_FILTER = 200;
/**
 * Values one operator filter may name (statuses, tools and principals count one each, a tag two): each is a bound
 * parameter, and a D1 query binds at most 100 (the rest go to time ranges, text, cursor and page size).
 */
export const MAX_OPERATOR_FILTER_VALUES = 80;
/** A bulk action takes at most this many tasks (ask again for more), acting on this many at a time. */
export const MAX_BULK_TASKS = 10_000;
export const BULK_CONCURRENCY = 16;
/** A bulk job not advanced for this long is resumed by the next request that reads it (or handed to its driver). */
export const BULK_STALL_MS = 30_000;
/**
 * Tasks one run of a bulk job takes (one request's `waitUntil`, or one alarm of the BulkDriver): about 1,000 runner
 * calls and 130 D1 queries, inside a paid plan's 10,000 subrequests and 1,000 D1 queries per invocation; the next
 * slice runs in the driver's next alarm, or without a driver on the next read of the job.
 */
export const BULK_RUN_TASKS = 1_000;
/**
 * The BulkDriver's safety alarm: armed this far ahead before each slice and pushed on after each batch, so a driver
 * evicted mid-slice runs the job on this long after its last progress.
 */
export const BULK_DRIVER_RETRY_MS = 10_000;
/** Restarts and retries made from one task: its links are kept in its row, so they are bounded. */
export const MAX_TASK_RESTARTS = 100;
/** Stuck-task thresholds when the request gives none. */
export const STUCK_WORKING_MS = 15 * 60_000;
export const STUCK_INPUT_MS = 24 * 60 * 60_000;
export const STUCK_ALARM_GRACE_MS = 60_000;
/** GET /operator/metrics reads at most this many finished rows (newest first) and answers at most this many buckets. */
export const MAX_METRICS_ROWS = 20_000;
export const MAX_METRICS_BUCKETS = 500;

/**
 * Open watch streams one TaskRunner serves at once (2025-11-25 `tasks/result` streams, SEP-2663 listens naming the
 * task): each holds a listener in the object and a stream through the Worker. Enforced by the object, so across
 * every Worker instance; docs/limits.md.
 */
export const MAX_STREAMS_PER_TASK = 32;
/**
 * Long-lived streams (`tasks/result` streams and task listens) one principal holds open at once through one Worker
 * instance; docs/limits.md.
 */
export const MAX_STREAMS_PER_PRINCIPAL = 64;
/**
 * How often a TaskRunner's watch stream writes a keep-alive line: a stream its reader closed is seen (and its listener
 * dropped) at the next write, so within this long (runner/task-stream.ts).
 */
export const WATCH_PING_MS = 2_000;

// --- Child tasks (steps/invoke-step.ts, runner/child-tasks.ts, runner/child-outbox.ts) ---
/** How deep `step.invoke` may nest: a task started by `step.invoke` is at depth 1, its own child at 2, … */
export const MAX_INVOKE_DEPTH = 8;
/** `step.invoke` calls one task may make over its life; one more throws InvokeError `too_many_children`. */
export const MAX_CHILDREN_PER_TASK = 1000;
/**
 * A parent with k children still waiting wakes at most once per k × this (up to INVOKE_WAKE_MAX_MS) when one of them
 * reports, and at once when its last waiting child does: n children cost O(n) replay work, not O(n²).
 */
export const INVOKE_WAKE_PER_CHILD_MS = 5;
export const INVOKE_WAKE_MAX_MS = 1000;
/** A child's notice to its parent is retried by the child's alarm, backing off from this to OUTBOX_MAX_DELAY_MS. */
export const OUTBOX_BASE_DELAY_MS = 200;
export const OUTBOX_MAX_DELAY_MS = 60_000;
// --- Fair share: concurrency and rate limits (limiter/, runner/run-slot.ts) ---
/** A concurrency slot lasts this long without a renewal: a crashed or evicted run's slot comes back after it. */
export const SLOT_LEASE_MS = 30_000;
/** A run renews its slot this often, well inside the lease. */
export const SLOT_RENEW_MS = 10_000;
/** A run stops before its next step this long before its lease would lapse unrenewed (clock skew, slow calls). */
export const SLOT_LEASE_MARGIN_MS = 2_000;
/** A limit key (what a `key` function returns) is 1 to this many characters. */
export const MAX_LIMIT_KEY_LENGTH = 256;
/**
 * A queued task asks its limiter again (repairing a lost wake, refreshing "queued: N ahead") after its place times
 * this, between QUEUE_RECHECK_MIN_MS and QUEUE_RECHECK_MAX_MS: far back in a long queue asks rarely.
 */
export const QUEUE_RECHECK_PER_AHEAD_MS = 200;
export const QUEUE_RECHECK_MIN_MS = 5_000;
export const QUEUE_RECHECK_MAX_MS = 300_000;
