// serveConsole under workerd: the page on its path (and with a trailing slash), under a CSP that allows exactly its
// inline script and stylesheet; the operator path put in, escaped; HEAD, another method, another path; bad options.
import { describe, expect, it } from "vitest";
import { CONSOLE_SCRIPT_HASH, CONSOLE_STYLE_HASH } from "../../src/console/console-page.generated.js";
import { serveConsole } from "../../src/console/index.js";

const at = (path: string, method = "GET") => new Request(`https://worker.test${path}`, { method });

describe("serveConsole", () => {
  it("serves the page at its path, with the operator path and a strict CSP", async () => {
    for (const path of ["/ops", "/ops/"]) {
      const response = serveConsole(at(path), { path: "/ops", operatorPath: "/ops-api/" })!;
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = response.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain(`script-src '${CONSOLE_SCRIPT_HASH}'`);
      expect(csp).toContain(`style-src '${CONSOLE_STYLE_HASH}'`);
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      const html = await response.text();
      expect(html).toContain('<meta name="durable-mcp-operator" content="/ops-api" />');
      expect(html).not.toContain("__DURABLE_MCP_OPERATOR_PATH__");
    }
  });

  it("escapes the operator path into the page", async () => {
    const response = serveConsole(at("/ops"), { path: "/ops", operatorPath: '/a"><script>x</script>' })!;
    const html = await response.text();
    expect(html).toContain('content="/a&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
  });

  it("answers HEAD without a body, 405 to another method, and null elsewhere", async () => {
    const head = serveConsole(at("/ops", "HEAD"), { path: "/ops" })!;
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = serveConsole(at("/ops", "POST"), { path: "/ops" })!;
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(serveConsole(at("/opsx"), { path: "/ops" })).toBeNull();
    expect(serveConsole(at("/ops/tasks"), { path: "/ops" })).toBeNull();
    expect(serveConsole(at("/"), { path: "/ops" })).toBeNull();
  });

  it("defaults the operator path to /operator and refuses relative paths", async () => {
    const html = await serveConsole(at("/ops"), { path: "/ops" })!.text();
    expect(html).toContain('content="/operator"');
    expect(() => serveConsole(at("/ops"), { path: "ops" })).toThrow(TypeError);
    expect(() => serveConsole(at("/ops"), { path: "/ops", operatorPath: "operator" })).toThrow(TypeError);
  });
});
