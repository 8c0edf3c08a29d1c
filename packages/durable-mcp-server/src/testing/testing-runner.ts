// The TaskRunner with the test-only seam: what a test config exports under the runner's class name, so that the kit
// can make sleeps due and mock step outcomes (docs/testing.md). A deployed Worker exports the runner itself, so its
// bundle has none of the seam's code, and no variable can turn the seam on there.
import { SEAM_HOST, TESTING_SEAM, type SeamHost } from "../runner/index.js";
import { runTestingOp, type TestingAnswer, type TestingOp } from "../runner/testing-seam.js";

// oxlint-disable-next-line no-explicit-any -- a mixin's base must take any[] (TypeScript's rule for class mixins)
type AnyClass = new (...args: any[]) => object;

/**
 * The TaskRunner class `Runner` (`durableMcp(...).TaskRunner`, or `defineTaskRunner(...)`) with the testing seam
 * `testTasks` drives. Export it under the runner's class name from the Worker your test config runs, e.g.
 * `export const TaskRunner = withTestingSeam(mcp.TaskRunner)`; never from the Worker you deploy.
 *
 * @param Runner - the TaskRunner class the deployed Worker exports.
 * @returns a subclass of `Runner` with the seam's RPC method; everything else is `Runner`'s.
 * @throws TypeError when `Runner` is not a TaskRunner class.
 * @example
 * ```ts
 * // test/worker.ts, the Worker vitest.config.ts runs (`main: "./test/worker.ts"`)
 * import { durableMcp, McpServer } from "durable-mcp-server";
 * import { withTestingSeam } from "durable-mcp-server/testing";
 *
 * const mcp = durableMcp(() => new McpServer({ name: "reports", version: "1.0.0" }));
 * export default { fetch: mcp.fetch };
 * export const TaskRunner = withTestingSeam(mcp.TaskRunner);
 * ```
 */
export function withTestingSeam<Runner extends AnyClass>(Runner: Runner): Runner {
  if (typeof (Runner.prototype as Partial<Record<typeof SEAM_HOST, unknown>>)[SEAM_HOST] !== "function") {
    throw new TypeError(
      "withTestingSeam takes a TaskRunner class: durableMcp(createServer).TaskRunner or defineTaskRunner(...)",
    );
  }
  class TestingTaskRunner extends Runner {
    /** The seam's one RPC method (runner/testing-seam.ts); the kit calls it through the TaskRunner binding. */
    async [TESTING_SEAM](op: TestingOp): Promise<TestingAnswer> {
      return runTestingOp((this as unknown as { [SEAM_HOST](): SeamHost })[SEAM_HOST](), op);
    }
  }
  return TestingTaskRunner;
}
