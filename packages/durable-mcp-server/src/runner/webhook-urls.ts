import { HmacKey } from "../util/hmac.js";

/** Resolved webhook settings (see `DurableMcpOptions.webhooks`). */
export interface WebhookSettings {
  /** Where webhook URLs are served, e.g. "/webhooks". */
  path: string;
  /** The env binding holding the signing secret. */
  secretBinding: string;
  /** Origin for the URLs handed out; default the origin the task was created at. */
  publicUrl?: string;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = { path: "/webhooks", secretBinding: "WEBHOOK_URL_SECRET" };

export type WebhookCheck = { check: "valid"; type: string } | { check: "expired" | "invalid" };

/**
 * Signed, expiring URLs for one event of one task: `<origin><path>/<taskId>/<hookId>?type=…&exp=…&sig=…`, where `sig`
 * is HMAC-SHA256 over (task, hook, type, expiry) with the deployment's secret. The URL is the capability: a POST to
 * it needs no MCP credentials and can deliver only its own type to its own task.
 */
export class WebhookSigner {
  readonly #key: HmacKey;

  constructor(secret: string) {
    this.#key = new HmacKey(secret);
  }

  async sign(origin: string, path: string, hook: { taskId: string; hookId: string; type: string; expiresAt: number }) {
    const exp = Math.floor(hook.expiresAt / 1000);
    const url = new URL(`${path}/${hook.taskId}/${hook.hookId}`, origin);
    url.searchParams.set("type", hook.type);
    url.searchParams.set("exp", String(exp));
    url.searchParams.set("sig", await this.#key.sign(message(hook.taskId, hook.hookId, hook.type, exp)));
    return url.toString();
  }

  /** The signature is checked before the expiry, so a forged expiry cannot pass as merely "expired". */
  async verify(url: URL, taskId: string, hookId: string, now = Date.now()): Promise<WebhookCheck> {
    const type = url.searchParams.get("type");
    const exp = url.searchParams.get("exp");
    const sig = url.searchParams.get("sig");
    if (type === null || !exp || !sig || !/^\d{1,12}$/.test(exp)) return { check: "invalid" };
    if (!(await this.#key.verify(message(taskId, hookId, type, +exp), sig))) return { check: "invalid" };
    return Number(exp) * 1000 <= now ? { check: "expired" } : { check: "valid", type };
  }
}

/** Whether the deployment has a usable webhook secret (without one, no webhook URL can exist). */
export function hasWebhookSecret(env: unknown, settings: WebhookSettings): boolean {
  const secret = (env as Record<string, unknown> | undefined)?.[settings.secretBinding];
  return typeof secret === "string" && secret.length >= 32;
}

/** The deployment's webhook signer; throws, naming the secret to set, when there is none or it is too short. */
export function webhookSigner(env: unknown, settings: WebhookSettings): WebhookSigner {
  const secret = (env as Record<string, unknown> | undefined)?.[settings.secretBinding];
  if (typeof secret !== "string" || secret.length < 32) {
    const name = settings.secretBinding;
    throw new Error(
      `webhooks: no secret "${name}" of at least 32 characters to sign webhook URLs with (wrangler secret put ${name})`,
    );
  }
  return new WebhookSigner(secret);
}

/** Newlines cannot occur in a task id or hook id; the type is last but for the expiry, which is digits. */
function message(taskId: string, hookId: string, type: string, exp: number): string {
  return `durable-mcp-webhook/v1\n${taskId}\n${hookId}\n${exp}\n${type}`;
}
