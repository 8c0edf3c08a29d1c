/**
 * The part an upload is filling, kept in the FileRunner's memory from one writer to the next (design/files.md,
 * "Round 7"). Bytes that do not fill a part are committed as pending rows; without this, every PATCH smaller than a
 * part read all of them back from SQLite and copied them into a new part buffer (up to 4 MiB per 1 MiB PATCH). The
 * rows stay the truth: the kept part is handed on only where it holds exactly what they hold, and an eviction, a
 * crash or any writer that ended otherwise leaves the next one to read them back.
 */
export interface FillingPart {
  /** The part's buffer, at the part's full length; its first `filled` bytes are the pending rows' bytes. */
  bytes: Uint8Array;
  filled: number;
  /** Where the part starts in the file. */
  start: number;
}

export class FillingSlot {
  #kept: FillingPart | null = null;

  /** The upload offset the kept part reaches (null: none kept); for tests and diagnostics. */
  get offset(): number | null {
    return this.#kept ? this.#kept.start + this.#kept.filled : null;
  }

  /**
   * For a writer whose part starts at `start`, is `length` bytes long and is filled to `offset`: the kept part if it
   * is exactly that one, else null (the writer reads the rows). Either way the slot empties: the writer owns it now.
   */
  take(start: number, length: number, offset: number): FillingPart | null {
    const kept = this.#kept;
    this.#kept = null;
    if (!kept || kept.start !== start || kept.bytes.byteLength !== length) return null;
    return kept.start + kept.filled === offset ? kept : null;
  }

  /**
   * A writer's part back once its bytes are committed; kept only if it reaches `offset` of an upload still
   * receiving (null: none). What the writer brought back otherwise is left to the collector.
   */
  putBack(part: FillingPart | null, offset: number | null): void {
    if (part && offset !== null && part.filled > 0 && part.start + part.filled === offset) this.#kept = part;
  }

  clear(): void {
    this.#kept = null;
  }
}
