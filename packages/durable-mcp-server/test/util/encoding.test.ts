import { describe, expect, it } from "vitest";
import { fromBase64, fromBase64Url, toBase64, toBase64Url, toHex } from "../../src/util/encoding.js";

// The module replaced hand-written loops over btoa/atob; these pin that the runtime's conversions answer the same,
// including for the malformed input tus headers and signed URLs bring.
const text = (value: string) => new TextEncoder().encode(value);

/** What the library did before: `atob`, byte by byte. The reference the native decoder must agree with. */
function viaAtob(value: string): number[] | "throws" {
  try {
    return [...atob(value)].map((char) => char.charCodeAt(0));
  } catch {
    return "throws";
  }
}

describe("encoding", () => {
  it("encodes the RFC 4648 test vectors", () => {
    const vectors: [string, string, string][] = [
      ["", "", ""],
      ["f", "Zg==", "66"],
      ["fo", "Zm8=", "666f"],
      ["foo", "Zm9v", "666f6f"],
      ["foob", "Zm9vYg==", "666f6f62"],
      ["fooba", "Zm9vYmE=", "666f6f6261"],
      ["foobar", "Zm9vYmFy", "666f6f626172"],
    ];
    for (const [plain, base64, hex] of vectors) {
      expect(toBase64(text(plain))).toBe(base64);
      expect(toHex(text(plain))).toBe(hex);
      expect(toHex(new Uint8Array(text(plain)).buffer)).toBe(hex);
      expect([...fromBase64(base64)]).toEqual([...text(plain)]);
    }
  });

  it("base64url is the btoa form with -_ and no padding, and decodes back", () => {
    for (let size = 0; size < 70; size++) {
      const bytes = crypto.getRandomValues(new Uint8Array(size));
      const expected = btoa(String.fromCharCode(...bytes))
        .replaceAll("+", "-")
        .replaceAll("/", "_")
        .replace(/=+$/, "");
      expect(toBase64Url(bytes)).toBe(expected);
      expect([...fromBase64Url(expected)]).toEqual([...bytes]);
    }
    expect(toBase64Url(new Uint8Array([0xfb, 0xff]))).toBe("-_8");
  });

  it("hex has two lowercase digits a byte", () => {
    expect(toHex(new Uint8Array([0, 1, 0x0f, 0x10, 0xab, 0xff]))).toBe("00010f10abff");
  });

  it("decodes base64 exactly as atob did, malformed input included", () => {
    const inputs = [
      "",
      "YQ",
      "YQ=",
      "YQ==",
      "YR==",
      "Y",
      "YQ===",
      "YQ==YQ==",
      "Y Q = =",
      "YQ\t==",
      "YWJj\n",
      "YW-j",
      "YW_j",
      "YW+j",
      "YW/j",
      "Zm9v!",
      "=",
      "==",
      "é",
    ];
    for (const input of inputs) {
      const expected = viaAtob(input);
      let actual: number[] | "throws";
      try {
        actual = [...fromBase64(input)];
      } catch {
        actual = "throws";
      }
      expect({ input, decoded: actual }).toEqual({ input, decoded: expected });
    }
  });

  it("round-trips a 1 MiB buffer (no argument-count limit)", () => {
    const bytes = new Uint8Array(1024 * 1024);
    for (let at = 0; at < bytes.length; at += 65536) crypto.getRandomValues(bytes.subarray(at, at + 65536));
    const decoded = fromBase64(toBase64(bytes));
    expect(decoded.length).toBe(bytes.length);
    // One index, not a million-element diff: toEqual on a MiB array takes seconds.
    expect(decoded.findIndex((byte, at) => byte !== bytes[at])).toBe(-1);
  });
});
