import { describe, expect, it } from "vitest";
import { heapSummary, type HeapSnapshot } from "../src/inspector.ts";

// A heap snapshot as V8 writes it, cut down to four nodes: fields per node in `node_fields` order, names as
// indexes into `strings`, the type as an index into `node_types[0]`.
const snapshot: HeapSnapshot = {
  snapshot: {
    meta: {
      node_fields: ["type", "name", "id", "self_size", "edge_count"],
      node_types: [["hidden", "array", "string", "object", "code", "closure", "native"], "string", "number"],
    },
  },
  strings: ["", "TaskRecord", "some string contents", "Map"],
  // type, name, id, self_size, edge_count
  nodes: [3, 1, 1, 40, 0, 3, 1, 3, 40, 0, 2, 2, 5, 32, 0, 3, 3, 7, 100, 0],
};

describe("heapSummary (a heap snapshot by kind)", () => {
  it("groups objects by type and constructor name, strings by type alone, largest first", () => {
    expect(heapSummary(snapshot)).toEqual([
      { kind: "object Map", count: 1, selfBytes: 100 },
      { kind: "object TaskRecord", count: 2, selfBytes: 80 },
      { kind: "string", count: 1, selfBytes: 32 },
    ]);
  });
});
