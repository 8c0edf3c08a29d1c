// `pnpm bench:warm-create`: the warm-runner rows of bench:table alone, for comparing two versions of the create path
// quickly (serve each from a worktree of its commit, and alternate). Paced like bench:table's warm block (60 ms after
// each request; a create's after its task completed), one request of each kind in turn so that drift falls on all:
// F (GET /floor/http), the least a create can be (a tools/call to /floor/http-post-write: one parse, one committed
// row in a warm object), and a create on /mcp-counted that a prepared runner serves, with its round trip (tasks/get
// until final). Prints each round's p50s and their ratios to F.
//   BENCH_PORT (default 8795), WARM_ROUNDS (default 4), WARM_PER_ROUND (default 50)
import { log, port } from "./common.ts";
import { httpSamples, postFloorClient } from "./floor.ts";
import { benchClient } from "./mcp.ts";
import { withServer } from "./server.ts";
import { summarize } from "./stats.ts";
import { createAndPoll, PACED_GAP_MS } from "./table.ts";

const rounds = Number(process.env.WARM_ROUNDS ?? 4);
const perRound = Number(process.env.WARM_PER_ROUND ?? 50);
const pause = () => new Promise((resolve) => setTimeout(resolve, PACED_GAP_MS));
const p50 = (samples: number[]) => summarize(samples).p50;

await withServer(port, async ({ origin }) => {
  const client = benchClient(`${origin}/mcp-counted`);
  const least = postFloorClient(origin, "/floor/http-post-write", "tools/call");
  const params = { name: "bench_steps", arguments: { steps: 1, payloadBytes: 0 }, _meta: client.envelope() };
  // Until the pool's rate (its last 10 s) asks for runners, as bench:table's paced warm-up.
  for (let i = 0; i < 30; i++) {
    await createAndPoll(client);
    await pause();
  }
  for (let round = 1; round <= rounds; round++) {
    const f: number[] = [];
    const floor: number[] = [];
    const creates: number[] = [];
    const trips: number[] = [];
    let gets = 0;
    for (let i = 0; i < perRound; i++) {
      f.push(...(await httpSamples(origin, "/floor/http", 1)));
      await pause();
      floor.push(await least(params));
      await pause();
      const [created, total, sent] = await createAndPoll(client);
      creates.push(created);
      trips.push(total);
      gets += sent;
      await pause();
    }
    const F = p50(f);
    const x = (value: number) => `${value.toFixed(2)} ms = ${(value / F).toFixed(2)}× F`;
    log(
      `round ${round}: paced F ${F.toFixed(2)} ms; least create ${x(p50(floor))}; warm create ${x(p50(creates))}; ` +
        `its round trip ${x(p50(trips))} (${(gets / perRound).toFixed(2)} gets per trip)`,
    );
  }
});
