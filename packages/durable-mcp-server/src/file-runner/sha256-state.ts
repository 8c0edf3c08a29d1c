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

// Every word is kept as a signed int32 (Int32Array, `| 0`) so V8 computes in 32-bit registers: an element of 2^31
// or more read from a Uint32Array is not an int32, and V8 handles it as a double.
const K = new Int32Array([
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

export class Sha256 {
  readonly #h = new Int32Array(INITIAL);
  readonly #block = new Uint8Array(64);
  readonly #blockView = new DataView(this.#block.buffer);
  /** Bytes hashed so far (the block's fill is `#length % 64`). */
  #length = 0;

  /** Bytes fed so far: the upload offset the state stands at. */
  get length(): number {
    return this.#length;
  }

  update(data: Uint8Array): this {
    const size = data.byteLength;
    let at = 0;
    let fill = this.#length % 64;
    this.#length += size;
    if (fill > 0) {
      const take = Math.min(64 - fill, size);
      this.#block.set(data.subarray(0, take), fill);
      at = take;
      fill += take;
      if (fill < 64) return this;
      compress(this.#h, this.#blockView, 0);
    }
    if (at + 64 <= size) {
      // Whole blocks straight from the input, one DataView per call (not per block), nothing copied.
      const view = new DataView(data.buffer, data.byteOffset, size);
      const h = this.#h;
      for (; at + 64 <= size; at += 64) compress(h, view, at);
    }
    if (at < size) this.#block.set(data.subarray(at), 0);
    return this;
  }

  /** The digest of everything fed so far; the state itself is left as it was. */
  digest(): Uint8Array {
    const h = new Int32Array(this.#h);
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
    for (let i = 0; i < 8; i++) outView.setInt32(i * 4, h[i]!);
    return out;
  }

  /** The state as bytes, to store with the upload; `Sha256.restore` takes it back. */
  save(): Uint8Array {
    const out = new Uint8Array(SHA256_STATE_BYTES);
    const view = new DataView(out.buffer);
    out[0] = FORMAT;
    for (let i = 0; i < 8; i++) view.setInt32(1 + i * 4, this.#h[i]!);
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
    for (let i = 0; i < 8; i++) hash.#h[i] = view.getInt32(1 + i * 4);
    hash.#length = view.getUint32(33) * 0x1_0000_0000 + view.getUint32(37);
    hash.#block.set(saved.subarray(41, 41 + (hash.#length % 64)));
    return hash;
  }
}

/**
 * One 64-byte block of `data` at `at` into the state `state` (FIPS 180-4, 6.2.2), written for V8's optimiser:
 * - the eight working variables and the 16-word message schedule are locals (registers or stack slots), never
 *   array elements; the schedule is computed in place, W[t] over W[t-16] (6.2.2 step 1 needs only the last 16);
 * - the rounds are unrolled 16 at a time and rename instead of moving: a round computes its T1 into the slot of
 *   `h`, adds it to `d` (the next `e`), then adds T2 to it (the next `a`); the next round reads the same letters
 *   shifted by one (its `a` is this round's `h`, …), so after 8 rounds the names are back where they started;
 * - T1 adds K[t] + W[t] first, which do not depend on the previous round, so the chain through `e` is short;
 *   Ch(e, f, g) = g ^ (e & (f ^ g)) and Maj(a, b, c) = (a & b) | (c & (a | b)), equal to the standard's forms;
 * - one block per call: the function has no long loop, so V8 optimises it whole after a few blocks instead of
 *   entering it mid-loop (on-stack replacement), which left its exit without type feedback and deoptimised it on
 *   every later call.
 * Sums are `| 0` so every intermediate stays an int32 (the standard's arithmetic mod 2^32).
 */
function compress(state: Int32Array, data: DataView, at: number): void {
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  let w0 = data.getInt32(at + 0);
  let w1 = data.getInt32(at + 4);
  let w2 = data.getInt32(at + 8);
  let w3 = data.getInt32(at + 12);
  let w4 = data.getInt32(at + 16);
  let w5 = data.getInt32(at + 20);
  let w6 = data.getInt32(at + 24);
  let w7 = data.getInt32(at + 28);
  let w8 = data.getInt32(at + 32);
  let w9 = data.getInt32(at + 36);
  let w10 = data.getInt32(at + 40);
  let w11 = data.getInt32(at + 44);
  let w12 = data.getInt32(at + 48);
  let w13 = data.getInt32(at + 52);
  let w14 = data.getInt32(at + 56);
  let w15 = data.getInt32(at + 60);
  const k = K;
  for (let j = 0; j < 64; j += 16) {
    if (j > 0) {
      // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], for t = j … j + 15, into the slot of W[t-16].
      w0 =
        (w0 +
          (((w1 >>> 7) | (w1 << 25)) ^ ((w1 >>> 18) | (w1 << 14)) ^ (w1 >>> 3)) +
          w9 +
          (((w14 >>> 17) | (w14 << 15)) ^ ((w14 >>> 19) | (w14 << 13)) ^ (w14 >>> 10))) |
        0;
      w1 =
        (w1 +
          (((w2 >>> 7) | (w2 << 25)) ^ ((w2 >>> 18) | (w2 << 14)) ^ (w2 >>> 3)) +
          w10 +
          (((w15 >>> 17) | (w15 << 15)) ^ ((w15 >>> 19) | (w15 << 13)) ^ (w15 >>> 10))) |
        0;
      w2 =
        (w2 +
          (((w3 >>> 7) | (w3 << 25)) ^ ((w3 >>> 18) | (w3 << 14)) ^ (w3 >>> 3)) +
          w11 +
          (((w0 >>> 17) | (w0 << 15)) ^ ((w0 >>> 19) | (w0 << 13)) ^ (w0 >>> 10))) |
        0;
      w3 =
        (w3 +
          (((w4 >>> 7) | (w4 << 25)) ^ ((w4 >>> 18) | (w4 << 14)) ^ (w4 >>> 3)) +
          w12 +
          (((w1 >>> 17) | (w1 << 15)) ^ ((w1 >>> 19) | (w1 << 13)) ^ (w1 >>> 10))) |
        0;
      w4 =
        (w4 +
          (((w5 >>> 7) | (w5 << 25)) ^ ((w5 >>> 18) | (w5 << 14)) ^ (w5 >>> 3)) +
          w13 +
          (((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10))) |
        0;
      w5 =
        (w5 +
          (((w6 >>> 7) | (w6 << 25)) ^ ((w6 >>> 18) | (w6 << 14)) ^ (w6 >>> 3)) +
          w14 +
          (((w3 >>> 17) | (w3 << 15)) ^ ((w3 >>> 19) | (w3 << 13)) ^ (w3 >>> 10))) |
        0;
      w6 =
        (w6 +
          (((w7 >>> 7) | (w7 << 25)) ^ ((w7 >>> 18) | (w7 << 14)) ^ (w7 >>> 3)) +
          w15 +
          (((w4 >>> 17) | (w4 << 15)) ^ ((w4 >>> 19) | (w4 << 13)) ^ (w4 >>> 10))) |
        0;
      w7 =
        (w7 +
          (((w8 >>> 7) | (w8 << 25)) ^ ((w8 >>> 18) | (w8 << 14)) ^ (w8 >>> 3)) +
          w0 +
          (((w5 >>> 17) | (w5 << 15)) ^ ((w5 >>> 19) | (w5 << 13)) ^ (w5 >>> 10))) |
        0;
      w8 =
        (w8 +
          (((w9 >>> 7) | (w9 << 25)) ^ ((w9 >>> 18) | (w9 << 14)) ^ (w9 >>> 3)) +
          w1 +
          (((w6 >>> 17) | (w6 << 15)) ^ ((w6 >>> 19) | (w6 << 13)) ^ (w6 >>> 10))) |
        0;
      w9 =
        (w9 +
          (((w10 >>> 7) | (w10 << 25)) ^ ((w10 >>> 18) | (w10 << 14)) ^ (w10 >>> 3)) +
          w2 +
          (((w7 >>> 17) | (w7 << 15)) ^ ((w7 >>> 19) | (w7 << 13)) ^ (w7 >>> 10))) |
        0;
      w10 =
        (w10 +
          (((w11 >>> 7) | (w11 << 25)) ^ ((w11 >>> 18) | (w11 << 14)) ^ (w11 >>> 3)) +
          w3 +
          (((w8 >>> 17) | (w8 << 15)) ^ ((w8 >>> 19) | (w8 << 13)) ^ (w8 >>> 10))) |
        0;
      w11 =
        (w11 +
          (((w12 >>> 7) | (w12 << 25)) ^ ((w12 >>> 18) | (w12 << 14)) ^ (w12 >>> 3)) +
          w4 +
          (((w9 >>> 17) | (w9 << 15)) ^ ((w9 >>> 19) | (w9 << 13)) ^ (w9 >>> 10))) |
        0;
      w12 =
        (w12 +
          (((w13 >>> 7) | (w13 << 25)) ^ ((w13 >>> 18) | (w13 << 14)) ^ (w13 >>> 3)) +
          w5 +
          (((w10 >>> 17) | (w10 << 15)) ^ ((w10 >>> 19) | (w10 << 13)) ^ (w10 >>> 10))) |
        0;
      w13 =
        (w13 +
          (((w14 >>> 7) | (w14 << 25)) ^ ((w14 >>> 18) | (w14 << 14)) ^ (w14 >>> 3)) +
          w6 +
          (((w11 >>> 17) | (w11 << 15)) ^ ((w11 >>> 19) | (w11 << 13)) ^ (w11 >>> 10))) |
        0;
      w14 =
        (w14 +
          (((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3)) +
          w7 +
          (((w12 >>> 17) | (w12 << 15)) ^ ((w12 >>> 19) | (w12 << 13)) ^ (w12 >>> 10))) |
        0;
      w15 =
        (w15 +
          (((w0 >>> 7) | (w0 << 25)) ^ ((w0 >>> 18) | (w0 << 14)) ^ (w0 >>> 3)) +
          w8 +
          (((w13 >>> 17) | (w13 << 15)) ^ ((w13 >>> 19) | (w13 << 13)) ^ (w13 >>> 10))) |
        0;
    }
    h =
      (h +
        k[j + 0]! +
        w0 +
        (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g)))) |
      0;
    d = (d + h) | 0;
    h =
      (h +
        (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) |
      0;
    g =
      (g +
        k[j + 1]! +
        w1 +
        (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f)))) |
      0;
    c = (c + g) | 0;
    g =
      (g +
        (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) |
      0;
    f =
      (f +
        k[j + 2]! +
        w2 +
        (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e)))) |
      0;
    b = (b + f) | 0;
    f =
      (f +
        (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) |
      0;
    e =
      (e +
        k[j + 3]! +
        w3 +
        (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d)))) |
      0;
    a = (a + e) | 0;
    e =
      (e +
        (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) |
      0;
    d =
      (d +
        k[j + 4]! +
        w4 +
        (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c)))) |
      0;
    h = (h + d) | 0;
    d =
      (d +
        (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) |
      0;
    c =
      (c +
        k[j + 5]! +
        w5 +
        (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b)))) |
      0;
    g = (g + c) | 0;
    c =
      (c +
        (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) |
      0;
    b =
      (b +
        k[j + 6]! +
        w6 +
        (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a)))) |
      0;
    f = (f + b) | 0;
    b =
      (b +
        (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) |
      0;
    a =
      (a +
        k[j + 7]! +
        w7 +
        (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h)))) |
      0;
    e = (e + a) | 0;
    a =
      (a +
        (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) |
      0;
    h =
      (h +
        k[j + 8]! +
        w8 +
        (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g)))) |
      0;
    d = (d + h) | 0;
    h =
      (h +
        (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) |
      0;
    g =
      (g +
        k[j + 9]! +
        w9 +
        (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f)))) |
      0;
    c = (c + g) | 0;
    g =
      (g +
        (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) |
      0;
    f =
      (f +
        k[j + 10]! +
        w10 +
        (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e)))) |
      0;
    b = (b + f) | 0;
    f =
      (f +
        (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) |
      0;
    e =
      (e +
        k[j + 11]! +
        w11 +
        (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d)))) |
      0;
    a = (a + e) | 0;
    e =
      (e +
        (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) |
      0;
    d =
      (d +
        k[j + 12]! +
        w12 +
        (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c)))) |
      0;
    h = (h + d) | 0;
    d =
      (d +
        (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) |
      0;
    c =
      (c +
        k[j + 13]! +
        w13 +
        (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b)))) |
      0;
    g = (g + c) | 0;
    c =
      (c +
        (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) |
      0;
    b =
      (b +
        k[j + 14]! +
        w14 +
        (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a)))) |
      0;
    f = (f + b) | 0;
    b =
      (b +
        (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) |
      0;
    a =
      (a +
        k[j + 15]! +
        w15 +
        (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h)))) |
      0;
    e = (e + a) | 0;
    a =
      (a +
        (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) |
      0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}
