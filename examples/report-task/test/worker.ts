// The Worker the tests run: the one you deploy (src/index.ts), with its TaskRunner swapped for one that has the
// test-only seam durable-mcp-server/testing drives (sleeps made due now, mocked steps). Only vitest.config.ts points
// at this file; wrangler.jsonc's `main` stays src/index.ts, so a deployed bundle has none of the seam.
import { withTestingSeam } from "durable-mcp-server/testing";
import { TaskRunner as DeployedTaskRunner } from "../src/index.js";

export { default } from "../src/index.js";
export const TaskRunner = withTestingSeam(DeployedTaskRunner);
