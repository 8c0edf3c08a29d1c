import type { FillingPart } from "./filling-part.js";
import type { RunningDigest } from "./running-digest.js";

/** The one writer of an upload, in the FileRunner's memory, with what `too_long` restores. */
export interface Lease {
  id: string;
  touchedAt: number;
  /** The upload as the writer found it. */
  from: number;
  partCount: number;
  /**
   * The pending rows as the writer found them, for a refused body to put back; null while they are not read (the
   * writer filled on in the kept part): a body of unknown length reads them before its first part commit drops them.
   */
  pending: Uint8Array[] | null;
  /** The body declared its length (and it fits): it ends there and is never refused as too long (upload.ts). */
  bounded: boolean;
  /** The running digest this writer feeds (handed over by `write`); back to the object when the lease ends. */
  digest: RunningDigest | null;
  /** The part the writer filled, every byte committed, given back as its body ended (`keepFilling`). */
  filling: FillingPart | null;
  /** Settles when the lease ends: writers waiting for it race this against its lapse. */
  released: Promise<void>;
  release: () => void;
}

/** A new lease for a writer that finds the upload at `from` with `partCount` parts recorded. */
export function openLease(from: number, partCount: number, pending: Uint8Array[] | null, bounded: boolean): Lease {
  let release: (() => void) | undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  // The executor runs synchronously, so release is set here.
  return {
    id: crypto.randomUUID(),
    touchedAt: Date.now(),
    from,
    partCount,
    pending,
    bounded,
    digest: null,
    filling: null,
    released,
    release: release!,
  };
}
