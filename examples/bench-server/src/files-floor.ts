// The floor of the files rows of `pnpm bench` (bench/files.ts): what R2 itself does with the same bytes in the same
// runtime, with nothing of the library in between, and the CPU the native SHA-256 digest costs per byte.
//   PUT    /floor/r2-put?size=N    the request body (Content-Length N) into one FILES.put() → { key, size, putMs }
//   GET    /floor/r2-get?key=K     that object (or files/<handle>: an upload's own) streamed back
//   DELETE /floor/r2-put?key=K     removes it
//   GET    /floor/sha256?mib=N     N MiB hashed by the native digest (ms); `resumableMs` is 0 since the software
//                                  SHA-256 left the library (issue 32)

const MIB = 1024 * 1024;
const MAX_BYTES = 4 * 1024 * MIB;

const text = (status: number, message: string) => new Response(`${message}\n`, { status });

export async function filesFloor(request: Request, url: URL, bucket: R2Bucket): Promise<Response | null> {
  switch (url.pathname) {
    case "/floor/r2-put": {
      if (request.method === "DELETE") {
        const key = url.searchParams.get("key") ?? "";
        if (!key.startsWith("floor/")) return text(400, "key must start with floor/");
        await bucket.delete(key);
        return new Response(null, { status: 204 });
      }
      const size = Number(url.searchParams.get("size"));
      if (!Number.isSafeInteger(size) || size < 0 || size > MAX_BYTES) return text(400, "size out of range");
      if (request.headers.get("Content-Length") !== String(size) || !request.body) {
        return text(411, "the body must have Content-Length equal to size");
      }
      const key = `floor/r2-put-${crypto.randomUUID()}`;
      const started = Date.now();
      const object = await bucket.put(key, request.body.pipeThrough(new FixedLengthStream(size)));
      return Response.json({ key, size: object?.size ?? null, putMs: Date.now() - started });
    }
    case "/floor/r2-get": {
      const key = url.searchParams.get("key") ?? "";
      // A floor object, or an uploaded file's own object (files/<handle>): the download's floor is a raw get of it.
      const object = key.startsWith("floor/") || key.startsWith("files/") ? await bucket.get(key) : null;
      if (!object) return text(404, "no such object");
      // The download's own type: a response without one is gzipped by workerd for a client that accepts it.
      const headers = { "Content-Length": String(object.size), "Content-Type": "application/octet-stream" };
      return new Response(object.body, { headers });
    }
    case "/floor/sha256": {
      const mib = Number(url.searchParams.get("mib") ?? 64);
      if (!Number.isInteger(mib) || mib < 1 || mib > 1024) return text(400, "mib must be 1..1024");
      const chunk = new Uint8Array(MIB);
      for (let at = 0; at < MIB; at += 65_536) crypto.getRandomValues(chunk.subarray(at, at + 65_536));
      // The local workerd's clock moves during CPU work (the bench's clock check says so); deployed, it would not.
      const resumableMs = 0;
      const started = performance.now();
      const native = new crypto.DigestStream("SHA-256");
      const writer = native.getWriter();
      for (let i = 0; i < mib; i++) await writer.write(chunk);
      await writer.close();
      await native.digest;
      const nativeMs = performance.now() - started;
      return Response.json({ mib, resumableMs, nativeMs });
    }
    default:
      return null;
  }
}
