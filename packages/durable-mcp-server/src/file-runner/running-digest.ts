/**
 * An upload's whole-file SHA-256, computed natively (`crypto.DigestStream`) as its bytes arrive, and kept in the
 * FileRunner's memory from one PATCH to the next (design/files.md, "Whole-file digest").
 *
 * A DigestStream's state cannot be saved, so this digest lives as long as the object's instance: an eviction, a
 * crash or a refused chunk whose bytes it was already fed ends it, and completion then hashes the stored object in
 * one native pass instead (`digestStored`). It is only ever trusted at the exact offset it was fed to.
 */
export class RunningDigest {
  readonly #stream = new crypto.DigestStream("SHA-256");
  readonly #writer = this.#stream.getWriter();
  #length = 0;
  #done = false;

  /** Bytes fed so far: the upload offset this digest stands at. */
  get length(): number {
    return this.#length;
  }

  /**
   * Feeds `bytes`. The stream hashes them before the write settles and keeps no reference: the caller may reuse or
   * send the buffer on once this resolves.
   */
  async update(bytes: Uint8Array): Promise<void> {
    // A writer whose lease lapsed may still be streaming into a digest the object dropped: nothing reads it now,
    // and that writer learns it lost its lease at its next commit (409), not from here.
    if (this.#done) return;
    this.#length += bytes.byteLength;
    await this.#writer.write(bytes);
  }

  /** The digest of everything fed; the stream ends. */
  async finish(): Promise<Uint8Array> {
    this.#done = true;
    await this.#writer.close();
    return new Uint8Array(await this.#stream.digest);
  }

  /** Ends the stream without a digest (its bytes no longer stand for the upload's). */
  discard(): void {
    if (this.#done) return;
    this.#done = true;
    // Aborting rejects the digest promise; nobody reads it now.
    this.#stream.digest.catch(() => {});
    this.#writer.abort().catch(() => {});
  }
}

/**
 * The SHA-256 of the stored object's first `size` bytes in one native pass: R2's body piped into a DigestStream, no
 * byte through JavaScript. What completion does when the running digest did not survive to the end.
 */
export async function digestStored(bucket: R2Bucket, key: string, size: number): Promise<Uint8Array> {
  const object = await bucket.get(key);
  if (!object || object.size !== size) throw new Error(`stored object ${key} is missing or has the wrong size`);
  const stream = new crypto.DigestStream("SHA-256");
  await object.body.pipeTo(stream);
  return new Uint8Array(await stream.digest);
}

/**
 * Where a FileRunner keeps its upload's running digest between writers: a writer takes it out with its lease and
 * gives it back when the lease ends; it is only ever handed on at the exact offset it was fed to.
 */
export class DigestSlot {
  #digest: RunningDigest | null = null;

  /** Where the kept digest stands (null: none kept); for tests and diagnostics. */
  get offset(): number | null {
    return this.#digest?.length ?? null;
  }

  /** For a writer starting at `offset`: the digest kept if it stands there, a new one at 0, else null (dropped). */
  take(offset: number): RunningDigest | null {
    const kept = this.#digest;
    this.#digest = null;
    if (kept?.length === offset) return kept;
    kept?.discard();
    return offset === 0 ? new RunningDigest() : null;
  }

  /** A writer's digest back, kept if it stands at `offset` of an upload still receiving (null: none), else dropped. */
  putBack(digest: RunningDigest | null, offset: number | null): void {
    if (!digest) return;
    if (offset !== null && digest.length === offset && !this.#digest) this.#digest = digest;
    else digest.discard();
  }

  /** For completion at `size`: `given` or the kept digest if it stands at `size`, else null; the slot empties. */
  forCompletion(given: RunningDigest | null, size: number): RunningDigest | null {
    const kept = this.#digest;
    this.#digest = null;
    const chosen = given?.length === size ? given : kept?.length === size ? kept : null;
    if (given !== chosen) given?.discard();
    if (kept !== chosen) kept?.discard();
    return chosen;
  }

  clear(): void {
    this.#digest?.discard();
    this.#digest = null;
  }
}
