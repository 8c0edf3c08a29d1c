// The floor of the files rows of `pnpm bench` (bench/files.ts): what R2 itself does with the same bytes in the same
// runtime, with nothing of the library in between, and the CPU the native SHA-256 digest costs per byte.
//   PUT    /floor/r2-put?size=N    the request body (Content-Length N) into one FILES.put() → { key, size, putMs }
//   GET    /floor/r2-get?key=K     that object (or files/<handle>: an upload's own) streamed back
//   DELETE /floor/r2-put?key=K     removes it
//   PUT    /floor/chunk-put?run=R&index=I&size=N   one chunk of a chunked upload floor: the body into its own
//                                  object floor/chunks/R/I (one request and one durable write per chunk, no assembly)
//   POST   /floor/multipart?key=K  starts a multipart upload → { key, uploadId }
//   PUT    /floor/multipart?key=K&uploadId=U&part=P&size=N   the body as part P → { partNumber, etag }
//   POST   /floor/multipart?key=K&uploadId=U&complete=1     body: the parts → { size }
//   PUT    /floor/routed-multipart?key=K&uploadId=U&part=P&size=N   the same part, through the Floor object named K,
//                                  which reads it into one buffer, feeds the upload's running SHA-256 and sends the
//                                  part (Floor.routedPart)
//   POST   /floor/routed-multipart?key=K&uploadId=U&complete=1     body: the parts → { size, sha256 } (start: as
//                                  /floor/multipart)
//   DELETE /floor/chunks?run=R     removes floor/chunks/R/*
//   GET    /floor/sha256?mib=N     N MiB hashed by the native digest (ms); `resumableMs` is 0 since the software
//                                  SHA-256 left the library (issue 32)

import type { Env } from "./index.js";

const MIB = 1024 * 1024;
const MAX_BYTES = 4 * 1024 * MIB;

const text = (status: number, message: string) => new Response(`${message}\n`, { status });

export async function filesFloor(request: Request, url: URL, env: Env): Promise<Response | null> {
  const bucket = env.FILES;
  switch (url.pathname) {
    case "/floor/r2-put": {
      if (request.method === "DELETE") {
        const key = url.searchParams.get("key") ?? "";
        if (!key.startsWith("floor/")) return text(400, "key must start with floor/");
        await bucket.delete(key);
        return new Response(null, { status: 204 });
      }
      const size = sizedBody(request, url);
      if (typeof size !== "number") return size;
      const key = `floor/r2-put-${crypto.randomUUID()}`;
      const started = Date.now();
      const object = await bucket.put(key, request.body!.pipeThrough(new FixedLengthStream(size)));
      return Response.json({ key, size: object?.size ?? null, putMs: Date.now() - started });
    }
    case "/floor/chunk-put": {
      const run = url.searchParams.get("run") ?? "";
      const index = Number(url.searchParams.get("index"));
      const size = sizedBody(request, url);
      if (typeof size !== "number") return size;
      if (!/^[\w-]{1,64}$/.test(run) || !Number.isSafeInteger(index) || index < 0) return text(400, "bad run or index");
      const object = await bucket.put(
        `floor/chunks/${run}/${index}`,
        request.body!.pipeThrough(new FixedLengthStream(size)),
      );
      return Response.json({ size: object?.size ?? null });
    }
    case "/floor/chunks": {
      const run = url.searchParams.get("run") ?? "";
      if (request.method !== "DELETE" || !/^[\w-]{1,64}$/.test(run)) return text(400, "DELETE with a run");
      for (;;) {
        const listed = await bucket.list({ prefix: `floor/chunks/${run}/`, limit: 1000 });
        if (listed.objects.length === 0) break;
        await bucket.delete(listed.objects.map((object) => object.key));
      }
      return new Response(null, { status: 204 });
    }
    case "/floor/multipart": {
      const key = url.searchParams.get("key") ?? "";
      if (!key.startsWith("floor/")) return text(400, "key must start with floor/");
      const uploadId = url.searchParams.get("uploadId");
      if (!uploadId) {
        const upload = await bucket.createMultipartUpload(key);
        return Response.json({ key, uploadId: upload.uploadId });
      }
      const upload = bucket.resumeMultipartUpload(key, uploadId);
      if (url.searchParams.get("complete") === "1") {
        const object = await upload.complete((await request.json()) as R2UploadedPart[]);
        return Response.json({ size: object.size });
      }
      const part = Number(url.searchParams.get("part"));
      const size = sizedBody(request, url);
      if (typeof size !== "number") return size;
      if (!Number.isInteger(part) || part < 1 || part > 10_000) return text(400, "part must be 1..10000");
      return Response.json(await upload.uploadPart(part, request.body!.pipeThrough(new FixedLengthStream(size))));
    }
    case "/floor/routed-multipart": {
      const key = url.searchParams.get("key") ?? "";
      const uploadId = url.searchParams.get("uploadId") ?? "";
      if (!key.startsWith("floor/") || !uploadId) return text(400, "key (floor/…) and uploadId are required");
      const object = env.FLOOR.get(env.FLOOR.idFromName(key));
      if (url.searchParams.get("complete") === "1") {
        return Response.json(await object.routedComplete(key, uploadId, (await request.json()) as R2UploadedPart[]));
      }
      const part = Number(url.searchParams.get("part"));
      const size = sizedBody(request, url);
      if (typeof size !== "number") return size;
      if (!Number.isInteger(part) || part < 1 || part > 10_000) return text(400, "part must be 1..10000");
      return Response.json(await object.routedPart(key, uploadId, part, size, request.body!));
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

/** The `size` a PUT declares, checked against its Content-Length, or the answer refusing it. */
function sizedBody(request: Request, url: URL): number | Response {
  const size = Number(url.searchParams.get("size"));
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_BYTES) return text(400, "size out of range");
  if (request.headers.get("Content-Length") !== String(size) || !request.body) {
    return text(411, "the body must have Content-Length equal to size");
  }
  return size;
}
