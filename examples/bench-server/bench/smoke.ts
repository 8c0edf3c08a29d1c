// Smoke test (`pnpm --filter bench-server test`): starts the bench server and checks that every bench tool and
// floor route does what it says. It asserts correctness only, never timing.
import { strict as assert } from "node:assert";
import { McpClient, resultOf } from "./mcp.ts";
import { withServer } from "./server.ts";

const port = Number(process.env.BENCH_TEST_PORT ?? 8796);
const began = performance.now();

await withServer(port, async (server) => {
  const client = new McpClient(server.url);

  const tools = ((await client.call("tools/list")).tools as Array<{ name: string }>).map((tool) => tool.name);
  for (const name of ["bench_steps", "bench_sleep", "bench_input"]) assert.ok(tools.includes(name), name);

  const steps = await client.start("bench_steps", { steps: 3, payloadBytes: 5 });
  const sleeper = await client.start("bench_sleep", { before: 2, sleepMs: 50, after: 2 });
  const asker = await client.start("bench_input", {});
  const finals = await client.listen([steps, sleeper, asker], async (task) => {
    if (task.status === "input_required") {
      assert.deepEqual(Object.keys(task.inputRequests ?? {}), ["continue"]);
      await client.update(asker, { continue: { action: "accept", content: { ok: true } } });
    }
  });
  assert.deepEqual(resultOf(finals.get(steps)!.task), { steps: 3, bytes: 15 });
  assert.deepEqual(resultOf(finals.get(sleeper)!.task), { steps: 4 });
  assert.deepEqual(resultOf(finals.get(asker)!.task), { action: "accept", content: { ok: true } });
  assert.deepEqual(resultOf(await client.get(steps)), { steps: 3, bytes: 15 });

  // A task tool refuses arguments outside its schema.
  const refused = await client.call("tools/call", { name: "bench_steps", arguments: { steps: -1, payloadBytes: 0 } });
  assert.equal(refused.isError, true);

  for (const path of ["/floor/noop", "/floor/http", "/floor/http-write"]) {
    const response = await fetch(`${server.origin}${path}`);
    assert.equal(response.status, 200, path);
    assert.equal(await response.text(), "ok", path);
  }
  const rpc = (await (await fetch(`${server.origin}/floor/rpc?n=5`)).json()) as { n: number; totalMs: number };
  assert.equal(rpc.n, 5);
  const inserted = (await (await fetch(`${server.origin}/floor/insert?n=7`)).json()) as { n: number };
  assert.equal(inserted.n, 7);
  const synced = (await (await fetch(`${server.origin}/floor/insert-synced?n=3`)).json()) as { times: number[] };
  assert.equal(synced.times.length, 3);
  assert.equal((await fetch(`${server.origin}/nowhere`)).status, 404);
});

console.log(`bench-server smoke test passed in ${((performance.now() - began) / 1000).toFixed(1)} s`);
