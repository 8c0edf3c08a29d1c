// The soak (`pnpm explore:soak`): the exploration properties of exploration.test.ts on seed after seed until
// EXPLORE_SOAK_SECONDS have passed. A failure prints its seed and shrunk program; rerun one with EXPLORE_SEED.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { it } from "vitest";
import { check, crashedPrograms, runProgram } from "./explore.js";
import { show } from "./program.js";

const settings = env as unknown as { EXPLORE_SOAK_SECONDS: string; EXPLORE_SEED: string };

it("soak: generated programs crashed at sampled points end as crash-free runs do", async () => {
  const until = Date.now() + Number(settings.EXPLORE_SOAK_SECONDS) * 1000;
  let seed = Number(settings.EXPLORE_SEED);
  let programs = 0;
  while (Date.now() < until) {
    const result = await fc.check(
      fc.asyncProperty(crashedPrograms, async ({ program, crash }) => {
        check(program, crash, await runProgram(program, crash));
      }),
      { numRuns: 20, seed },
    );
    programs += result.numRuns;
    if (result.failed) {
      const [shrunk] = result.counterexample!;
      throw new Error(
        `seed ${seed} failed after ${programs} programs\n  shrunk program: ${show(shrunk.program)}\n` +
          `  crash: ${JSON.stringify(shrunk.crash)}\n  program (JSON): ${JSON.stringify(shrunk.program)}\n` +
          `  ${String(result.errorInstance).split("\n")[0]}`,
      );
    }
    console.log(`[explore:soak] seed ${seed}: ${result.numRuns} programs passed (${programs} in all)`);
    seed++;
  }
});
