// The 2025-11-25 tasks wire's own bounds (docs/limits.md, "The 2025-11-25 tasks wire").

/** A signed session id stays valid this long after `initialize`; afterwards it is treated as no session. */
export const SESSION_TTL_MS = 24 * 60 * 60_000;
/** Declared client capabilities kept in a session id; larger ones are cut down to the kinds a task can use. */
export const MAX_SESSION_CAPABILITIES_BYTES = 2048;
/** Tasks a `tasks/list` page holds. */
export const LIST_PAGE_SIZE = 50;
/** TaskRunner reads a `tasks/list` page makes at a time. */
export const LIST_CONCURRENCY = 8;
/** How often an open `tasks/result` stream sends progress (or a keep-alive comment without a progressToken). */
export const RESULT_HEARTBEAT_MS = 15_000;
