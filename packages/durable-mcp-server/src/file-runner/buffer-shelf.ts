/**
 * Buffers an upload is done with, kept for its next part or PATCH: a part once R2 has its bytes, the part being
 * filled once its bytes are committed, the body reader's buffer once a body ends. Without it an upload allocates a
 * new part per part and a new read buffer per PATCH, and ArrayBuffers count against the isolate's memory until V8
 * collects them, which it does late for memory outside its heap: a 1 GiB upload in 1 MiB PATCHes peaked at 90 MB
 * of such garbage (docs/performance.md, "Uploads: against what chunking itself costs"). One shelf per FileRunner, so
 * it goes with the object; the FileRunner empties it when the upload ends.
 */
/** Buffers a FileRunner keeps between writers, its shelf and its kept part together: what one writer holds live. */
export const KEPT_BUFFERS = 4;

export class BufferShelf {
  readonly #free: ArrayBuffer[] = [];

  /** `keep`: the most buffers shelved at once (0: a shelf that keeps nothing, for a writer outside a FileRunner). */
  constructor(private readonly keep: number) {}

  /** A buffer of `length` bytes: a shelved one of that length if there is one, else a new one. */
  take(length: number): ArrayBuffer {
    const at = this.#free.findIndex((buffer) => buffer.byteLength === length);
    return at >= 0 ? this.#free.splice(at, 1)[0]! : new ArrayBuffer(length);
  }

  /**
   * Shelves a buffer nothing reads any more. An empty one, which is also what a buffer transferred elsewhere
   * (detached) reads as, is left to the collector, as is any over `keep`.
   */
  give(buffer: ArrayBuffer): void {
    if (buffer.byteLength === 0 || this.#free.length >= this.keep) return;
    this.#free.push(buffer);
  }

  /** Lets the collector have all but `most` of the shelved buffers (room for a buffer kept elsewhere). */
  trim(most: number): void {
    if (this.#free.length > most) this.#free.length = most;
  }

  /** How many buffers are shelved (tests). */
  get size(): number {
    return this.#free.length;
  }

  clear(): void {
    this.#free.length = 0;
  }
}
