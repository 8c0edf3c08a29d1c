// The showcase MCP server: a plain tool, report tasks, and the dataset pipeline over uploaded files.
import { McpServer, NonRetryableError, RepairableError, TaskProtocolError } from "durable-mcp-server";
import * as z from "zod";
import type { AuthEnv } from "./auth.js";
import { registerDatasetReport } from "./dataset-report.js";

export interface Env extends AuthEnv {
  TASK_RUNNER: DurableObjectNamespace;
  FILE_RUNNER: DurableObjectNamespace;
  /** The task page's agent (apps/demo-client/agent): its MCP client, one per browser session. */
  TASK_WATCHER: DurableObjectNamespace;
  /** Counts the sessions (agents) each client opens (apps/demo-client/agent/session.ts). */
  WATCHER_CLIENTS: DurableObjectNamespace;
  /** The MCP servers the page's agent may call ("/mcp" is this Worker's own). */
  WATCHER_SERVERS?: string;
  /** Signs the page's session cookies (32 characters or more). */
  WATCHER_SESSION_SECRET?: string;
  FILES: R2Bucket;
  FILE_URL_SECRET?: string;
  /** The task catalog (D1) the operator API reads. */
  TASK_CATALOG?: D1Database;
  /** The fair-share limiter (the shared "archive-uploads" limit of export_contacts). */
  TASK_LIMITER: DurableObjectNamespace;
  /** The operator API's token (a secret); without it the operator API answers on loopback only. */
  OPERATOR_TOKEN?: string;
}

/** The archive buckets `export_contacts` can upload to. */
const ARCHIVE_BUCKETS = ["contacts-archive", "contacts-archive-eu"];
const CONTACTS_PER_BATCH = 100;

export const createServer = (_env: Env) => {
  const server = new McpServer({ name: "task-server", version: "1.0.0" });

  server.registerTool(
    "ping",
    { title: "Ping", description: "Answers at once: checks that the server is up.", inputSchema: z.object({}) },
    async () => ({
      content: [{ type: "text", text: "pong" }],
    }),
  );

  server.registerTask(
    "send_report",
    {
      title: "Send a report",
      description:
        "Renders a report page by page, asks you to confirm, then sends it. Each page is a step that resumes " +
        "after a crash or deploy. To see a failure: a recipient at invalid.example fails the task with a tool " +
        "error, one at refused.example with a protocol error.",
      inputSchema: z.object({
        to: z.string().email().meta({ title: "Recipient", description: "Email address the report goes to." }),
        pages: z.number().int().min(1).max(50).default(5).meta({ title: "Pages", description: "1 to 50 pages." }),
        secondsPerPage: z
          .number()
          .min(0)
          .max(60)
          .default(1)
          .meta({ title: "Render time per page (seconds)", description: "0 to 60 s: how long each page takes." }),
      }),
      pollInterval: "1 second",
      // Filed in the task catalog under the recipient's domain: `durable-mcp tasks list --tag domain=example.com`.
      tags: ({ to }) => ({ domain: to.slice(to.indexOf("@") + 1) }),
    },
    async ({ to, pages, secondsPerPage }, step) => {
      const rendered: string[] = [];
      for (let page = 1; page <= pages; page++) {
        // Each page is journaled: after an eviction or deploy the task resumes at the first unfinished page.
        rendered.push(
          await step.do(
            `render page ${page}`,
            { retries: { limit: 3, delay: "2 seconds", backoff: "exponential" } },
            async () => {
              await new Promise((resolve) => setTimeout(resolve, secondsPerPage * 1000));
              return `page ${page} of ${pages}`;
            },
          ),
        );
        await step.status(`rendered ${page}/${pages} pages`, { progress: page / pages });
      }
      const answer = await step.elicit(
        "confirm send",
        {
          message: `Send the ${pages}-page report to ${to}?`,
          requestedSchema: {
            type: "object",
            properties: { send: { type: "boolean", title: "Send it" } },
            required: ["send"],
          },
        },
        { timeout: "1 hour" },
      );
      if (answer.action !== "accept" || answer.content?.send !== true) {
        return { content: [{ type: "text", text: `Report not sent (${answer.action}).` }] };
      }
      // The demo's protocol failure: the mail service refuses the job itself, so the task ends `failed` with a
      // JSON-RPC error (-32603, the SDK's ProtocolErrorCode.InternalError) rather than `completed` with an error
      // result (the @invalid.example mailbox below). Thrown outside a step: inside one it would be retried and end
      // as a step_failed tool error.
      if (to.endsWith("@refused.example")) {
        throw new TaskProtocolError(-32603, `the mail service refused the job for ${to}`, {
          reason: "mail_service_refused",
        });
      }
      const receipt = await step.do("send", async ({ idempotencyKey }) => {
        if (to.endsWith("@invalid.example")) throw new NonRetryableError(`mailbox ${to} does not exist`);
        return { messageId: idempotencyKey, pages: rendered.length };
      });
      return {
        content: [{ type: "text", text: `Sent ${receipt.pages} pages to ${to}.` }],
        structuredContent: receipt,
      };
    },
  );

  server.registerTask(
    "await_approval",
    {
      title: "Wait for an approval",
      description:
        "Waits for an approval from outside MCP — POST /events/<taskId> by this Worker's caller, or a POST to a signed " +
        "webhook link — then completes with its payload",
      inputSchema: z.object({
        webhook: z.boolean().default(false),
        timeoutMinutes: z.number().int().min(1).max(1440).default(60),
      }),
      pollInterval: "1 second",
    },
    async ({ webhook, timeoutMinutes }, step) => {
      if (webhook) {
        const url = await step.webhookUrl("approval link", {
          type: "approved",
          expiresIn: `${timeoutMinutes} minutes`,
        });
        // Whoever approves needs the link; in the demo that is the caller, so it is shown to them.
        await step.elicit("share link", {
          message: `Approve by POSTing JSON to ${url}`,
          requestedSchema: { type: "object", properties: {} },
        });
      }
      const decision = await step.waitForEvent("approval", { type: "approved", timeout: `${timeoutMinutes} minutes` });
      return {
        content: [{ type: "text", text: `Approved: ${JSON.stringify(decision.payload)}` }],
        structuredContent: { approval: decision.payload, at: decision.timestamp.toISOString() },
      };
    },
  );

  server.registerTask(
    "export_contacts",
    {
      title: "Export contacts",
      description:
        "Exports the contact list in batches and uploads the export to an archive bucket. A bucket that does not " +
        "exist fails the task with a repairable error.",
      inputSchema: z.object({
        // Not an enum on purpose: a wrong name shows the repairable error (unknown_bucket). `examples` lets the
        // page offer the valid ones.
        bucket: z
          .string()
          .min(1)
          .meta({
            title: "Archive bucket",
            description: `Where the export goes: ${ARCHIVE_BUCKETS.join(" or ")}.`,
            examples: ARCHIVE_BUCKETS,
          }),
        batches: z
          .number()
          .int()
          .min(1)
          .max(20)
          .default(4)
          .meta({ title: "Batches", description: `1 to 20 batches of ${CONTACTS_PER_BATCH} contacts.` }),
        secondsPerBatch: z
          .number()
          .min(0)
          .max(60)
          .default(1)
          .meta({ title: "Time per batch (seconds)", description: "0 to 60 s: how long each batch takes." }),
      }),
      pollInterval: "1 second",
      // Clients without the Tasks extension get the handle at once instead of waiting for the export.
      fallback: "handle",
      // The shared "archive-uploads" limit (worker.ts): the operator console's Limits view shows its slots.
      concurrency: { limit: "archive-uploads" },
    },
    async ({ bucket, batches, secondsPerBatch }, step) => {
      let contacts = 0;
      for (let batch = 1; batch <= batches; batch++) {
        contacts += await step.do(`export batch ${batch}`, async () => {
          await new Promise((resolve) => setTimeout(resolve, secondsPerBatch * 1000));
          return CONTACTS_PER_BATCH;
        });
        await step.status(`exported ${batch}/${batches} batches`, { progress: batch / batches });
      }
      // The bucket is looked up only once the export is ready: a wrong name fails the task after the batches,
      // with an error the caller can repair.
      const found = await step.do("find bucket", async () => ARCHIVE_BUCKETS.includes(bucket));
      if (!found) {
        throw new RepairableError({
          code: "unknown_bucket",
          message: `There is no archive bucket named "${bucket}".`,
          retryable: false,
          recoveryHint: `Start export_contacts again with bucket set to one of: ${ARCHIVE_BUCKETS.join(", ")}.`,
          param: "bucket",
        });
      }
      const upload = await step.do("upload", async ({ idempotencyKey }) => ({
        object: `${bucket}/contacts.csv`,
        contacts,
        uploadId: idempotencyKey,
      }));
      return {
        content: [{ type: "text", text: `Exported ${upload.contacts} contacts to ${upload.object}.` }],
        structuredContent: upload,
      };
    },
  );

  registerDatasetReport(server);

  server.registerTask(
    "fan_out",
    {
      title: "Fan out to child tasks",
      description:
        "Starts export_contacts three times as child tasks (step.invoke, all at once) and waits for all three: the " +
        "task page shows the tree, each child on its own page with a link back to this one.",
      inputSchema: z.object({
        secondsPerBatch: z.number().min(0).max(30).default(1).meta({
          title: "Time per batch (seconds)",
          description: "0 to 30 s: the children export 1, 2 and 3 batches.",
        }),
      }),
      pollInterval: "1 second",
    },
    async ({ secondsPerBatch }, step) => {
      // Children of different lengths, so the tree shows them in different states while it runs.
      const results = await Promise.all(
        [1, 2, 3].map((batches) =>
          step.invoke(`export ${batches}`, {
            task: "export_contacts",
            input: { bucket: ARCHIVE_BUCKETS[0], batches, secondsPerBatch },
            timeout: "10 minutes",
          }),
        ),
      );
      return {
        content: [{ type: "text", text: `All ${results.length} child exports completed.` }],
        structuredContent: { children: results.length },
      };
    },
  );
  return server;
};
