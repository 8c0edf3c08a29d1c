import type { CatalogCursor, CatalogFilter, CatalogSort, SortKey } from "../catalog/catalog-queries.js";
import {
  MAX_OPERATOR_FILTER_VALUES,
  MAX_OPERATOR_PAGE_SIZE,
  MAX_OPERATOR_TEXT_FILTER,
  OPERATOR_PAGE_SIZE,
} from "../limits.js";
import { fromBase64Url, toBase64Url } from "../util/encoding.js";
import type { TaskStatus } from "../wire/task-shapes.js";
import { OperatorError } from "./operator-errors.js";

// What an operator request asks for, read strictly: an unknown field, a malformed value, an oversized page or a bad
// cursor is a 400 naming the field, never ignored.

const STATUSES: ReadonlySet<string> = new Set(["working", "input_required", "completed", "failed", "cancelled"]);

/** The filter fields, as query parameters and as the keys of a bulk action's `where`. */
export const FILTER_FIELDS = [
  "status",
  "tool",
  "principal",
  "tag",
  "createdAfter",
  "createdBefore",
  "updatedAfter",
  "updatedBefore",
  "q",
] as const;

type FilterInput = Partial<Record<(typeof FILTER_FIELDS)[number], string | string[]>>;

/** Reads a filter from query parameters (or a bulk action's `where`); `extra` are the other fields allowed there. */
export function readFilter(input: FilterInput | URLSearchParams, extra: readonly string[] = []): CatalogFilter {
  const fields = new Map<string, string[]>();
  if (input instanceof URLSearchParams) {
    for (const [key, value] of input) fields.set(key, [...(fields.get(key) ?? []), value]);
  } else {
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      throw new OperatorError(400, "invalid_filter", "where must be an object of filter fields", "where");
    }
    for (const [key, value] of Object.entries(input)) {
      const values = Array.isArray(value) ? value : [value];
      if (!values.every((v) => typeof v === "string")) {
        throw new OperatorError(400, "invalid_filter", `${key} must be a string or an array of strings`, key);
      }
      fields.set(key, values as string[]);
    }
  }
  for (const key of fields.keys()) {
    if (!(FILTER_FIELDS as readonly string[]).includes(key) && !extra.includes(key)) {
      throw new OperatorError(
        400,
        "unknown_filter",
        `unknown field "${key.slice(0, 64)}"; the filters are ${FILTER_FIELDS.join(", ")}`,
        key.slice(0, 64),
      );
    }
  }
  const list = (key: string) =>
    fields
      .get(key)
      ?.flatMap((value) => value.split(","))
      .map((value) => value.trim())
      .filter((value) => value.length > 0);
  const filter: CatalogFilter = {};
  const status = list("status");
  if (status) {
    const bad = status.find((value) => !STATUSES.has(value));
    if (bad) {
      throw new OperatorError(
        400,
        "invalid_filter",
        `status "${bad.slice(0, 64)}" is none of ${[...STATUSES].join(", ")}`,
        "status",
      );
    }
    filter.status = status as TaskStatus[];
  }
  const tool = list("tool");
  if (tool) filter.tool = tool;
  const principal = fields.get("principal");
  if (principal) filter.principal = principal;
  const tags = fields.get("tag");
  if (tags) {
    filter.tags = tags.map((tag) => {
      const at = tag.indexOf("=");
      if (at <= 0)
        throw new OperatorError(400, "invalid_filter", `tag must be key=value (got "${tag.slice(0, 64)}")`, "tag");
      return [tag.slice(0, at), tag.slice(at + 1)];
    });
  }
  for (const key of ["createdAfter", "createdBefore", "updatedAfter", "updatedBefore"] as const) {
    const value = fields.get(key);
    if (value) filter[key] = readInstant(key, value.at(-1)!);
  }
  const text = fields.get("q")?.at(-1);
  if (text !== undefined) {
    if (text.length === 0 || text.length > MAX_OPERATOR_TEXT_FILTER) {
      throw new OperatorError(400, "invalid_filter", `q must be 1–${MAX_OPERATOR_TEXT_FILTER} characters`, "q");
    }
    filter.text = text;
  }
  const values =
    (filter.status?.length ?? 0) +
    (filter.tool?.length ?? 0) +
    (filter.principal?.length ?? 0) +
    2 * (filter.tags?.length ?? 0);
  if (values > MAX_OPERATOR_FILTER_VALUES) {
    throw new OperatorError(
      400,
      "invalid_filter",
      `a filter names at most ${MAX_OPERATOR_FILTER_VALUES} values (a tag counts 2); this one names ${values}`,
      "where",
    );
  }
  return filter;
}

/** Whether the filter narrows anything (a bulk action needs one). */
export function isEmptyFilter(filter: CatalogFilter): boolean {
  return Object.values(filter).every((value) => value === undefined || (Array.isArray(value) && value.length === 0));
}

/** An instant: ms since the epoch, an ISO 8601 date, or a duration ago ("90s", "15m", "1h", "7d"). */
export function readInstant(param: string, value: string, now = Date.now()): number {
  const ago = /^(\d+)(s|m|h|d)$/.exec(value);
  if (ago) return now - Number(ago[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as "s"];
  if (/^\d+$/.test(value)) return Number(value);
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) {
    throw new OperatorError(
      400,
      "invalid_filter",
      `${param} must be ms since the epoch, an ISO 8601 date or a duration ago like 1h`,
      param,
    );
  }
  return parsed;
}

/** A duration in ms ("900000", "15m"), for thresholds. */
export function readDuration(param: string, value: string | null, fallback: number): number {
  if (value === null) return fallback;
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  if (!match) throw new OperatorError(400, "invalid_filter", `${param} must be a duration like 15m or 900000`, param);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? "ms") as "ms"];
  return Number(match[1]) * unit;
}

export function readLimit(value: string | null): number {
  if (value === null) return OPERATOR_PAGE_SIZE;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new OperatorError(400, "invalid_filter", "limit must be a whole number from 1", "limit");
  }
  if (Number(value) > MAX_OPERATOR_PAGE_SIZE) {
    throw new OperatorError(400, "page_too_large", `limit is at most ${MAX_OPERATOR_PAGE_SIZE}`, "limit");
  }
  return Number(value);
}

export function readSort(value: string | null): CatalogSort {
  if (value === null) return { key: "created", descending: true };
  const descending = value.startsWith("-");
  const key = descending ? value.slice(1) : value;
  if (key !== "created" && key !== "updated") {
    throw new OperatorError(400, "invalid_filter", "sort is created, -created, updated or -updated", "sort");
  }
  return { key: key as SortKey, descending };
}

/** The cursor is opaque to clients: base64url of the sort it was made for and where the next page starts. */
export function encodeCursor(sort: CatalogSort, cursor: CatalogCursor): string {
  const text = JSON.stringify({ s: `${sort.descending ? "-" : ""}${sort.key}`, v: cursor.value, id: cursor.taskId });
  return toBase64Url(new TextEncoder().encode(text));
}

const malformed = () => new OperatorError(400, "invalid_cursor", "cursor is not one this API handed out", "cursor");

export function decodeCursor(value: string | null, sort: CatalogSort): CatalogCursor | null {
  if (value === null) return null;
  let parsed: { s?: unknown; v?: unknown; id?: unknown };
  try {
    if (value.length > 512) throw malformed();
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64Url(value)));
  } catch {
    throw malformed();
  }
  if (typeof parsed?.v !== "number" || typeof parsed.id !== "string" || typeof parsed.s !== "string") throw malformed();
  if (parsed.s !== `${sort.descending ? "-" : ""}${sort.key}`) {
    throw new OperatorError(400, "invalid_cursor", "cursor was made for another sort", "cursor");
  }
  return { value: parsed.v, taskId: parsed.id };
}
