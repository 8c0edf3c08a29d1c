/**
 * SHA-256 (FIPS 180-4) whose running state can be saved and restored, so an upload's whole-file digest survives an
 * eviction or a restart without reading back a byte it already hashed.
 *
 * Why our own: WebCrypto (`crypto.subtle`, `crypto.DigestStream`) cannot export its state. `@noble/hashes` (a
 * dependency, used for the HMAC of step keys) keeps its state in fields that are not its API (`A`…`H`, `buffer`,
 * `pos`, `length` of an internal class); reading them would tie every saved upload to one version's internals, and a
 * caret range could change them under us. The compression function is short and fixed by the standard; owning it
 * keeps the saved format ours (`SHA256_STATE_BYTES` bytes, versioned) and the tests check every result against
 * WebCrypto. Its cost is CPU in JavaScript where DigestStream is native: measured per byte in the bench
 * (docs/performance.md, "Files, round 2").
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** Saved state: 1 format byte, 8 state words, the byte count (8 bytes), the 64-byte block being filled. */
export const SHA256_STATE_BYTES = 1 + 32 + 8 + 64;
const FORMAT = 1;

/** The message schedule, shared: hashing is synchronous, so no two blocks are ever in flight at once. */
const W = new Uint32Array(64);

export class Sha256 {
  readonly #h = new Uint32Array(INITIAL);
  readonly #block = new Uint8Array(64);
  readonly #blockView = new DataView(this.#block.buffer);
  /** Bytes hashed so far (the block's fill is `#length % 64`). */
  #length = 0;

  /** Bytes fed so far: the upload offset the state stands at. */
  get length(): number {
    return this.#length;
  }

  update(data: Uint8Array): this {
    let at = 0;
    let fill = this.#length % 64;
    this.#length += data.byteLength;
    if (fill > 0) {
      const take = Math.min(64 - fill, data.byteLength);
      this.#block.set(data.subarray(0, take), fill);
      at = take;
      fill += take;
      if (fill < 64) return this;
      compress(this.#h, this.#blockView, 0);
    }
    if (at + 64 <= data.byteLength) {
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      for (; at + 64 <= data.byteLength; at += 64) compress(this.#h, view, at);
    }
    if (at < data.byteLength) this.#block.set(data.subarray(at), 0);
    return this;
  }

  /** The digest of everything fed so far; the state itself is left as it was. */
  digest(): Uint8Array {
    const h = new Uint32Array(this.#h);
    const fill = this.#length % 64;
    const tail = new Uint8Array(fill < 56 ? 64 : 128);
    tail.set(this.#block.subarray(0, fill));
    tail[fill] = 0x80;
    const bits = this.#length * 8;
    const view = new DataView(tail.buffer);
    view.setUint32(tail.byteLength - 8, Math.floor(bits / 0x1_0000_0000));
    view.setUint32(tail.byteLength - 4, bits >>> 0);
    for (let at = 0; at < tail.byteLength; at += 64) compress(h, view, at);
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]!);
    return out;
  }

  /** The state as bytes, to store with the upload; `Sha256.restore` takes it back. */
  save(): Uint8Array {
    const out = new Uint8Array(SHA256_STATE_BYTES);
    const view = new DataView(out.buffer);
    out[0] = FORMAT;
    for (let i = 0; i < 8; i++) view.setUint32(1 + i * 4, this.#h[i]!);
    view.setUint32(33, Math.floor(this.#length / 0x1_0000_0000));
    view.setUint32(37, this.#length >>> 0);
    out.set(this.#block.subarray(0, this.#length % 64), 41);
    return out;
  }

  /** The byte count a saved state stands at, without restoring it. */
  static lengthOf(saved: Uint8Array): number {
    const view = new DataView(saved.buffer, saved.byteOffset, saved.byteLength);
    return view.getUint32(33) * 0x1_0000_0000 + view.getUint32(37);
  }

  static restore(saved: Uint8Array): Sha256 {
    if (saved.byteLength !== SHA256_STATE_BYTES || saved[0] !== FORMAT) {
      throw new Error("not a saved SHA-256 state of this format");
    }
    const view = new DataView(saved.buffer, saved.byteOffset, saved.byteLength);
    const hash = new Sha256();
    for (let i = 0; i < 8; i++) hash.#h[i] = view.getUint32(1 + i * 4);
    hash.#length = view.getUint32(33) * 0x1_0000_0000 + view.getUint32(37);
    hash.#block.set(saved.subarray(41, 41 + (hash.#length % 64)));
    return hash;
  }
}

/** One 64-byte block of `data` at `at` into the state `h`. */
function compress(h: Uint32Array, data: DataView, at: number): void {
  for (let i = 0; i < 16; i++, at += 4) W[i] = data.getUint32(at);
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15]!;
    const w2 = W[i - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = h[0]! | 0;
  let b = h[1]! | 0;
  let c = h[2]! | 0;
  let d = h[3]! | 0;
  let e = h[4]! | 0;
  let f = h[5]! | 0;
  let g = h[6]! | 0;
  let hh = h[7]! | 0;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (hh + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = h[0]! + a;
  h[1] = h[1]! + b;
  h[2] = h[2]! + c;
  h[3] = h[3]! + d;
  h[4] = h[4]! + e;
  h[5] = h[5]! + f;
  h[6] = h[6]! + g;
  h[7] = h[7]! + hh;
}
