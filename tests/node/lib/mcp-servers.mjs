// Real MCP servers for the MCP tests: the reference `@modelcontextprotocol/server-everything`
// in its Streamable HTTP mode (a child process, as its own CLI starts it), and a small
// counting server of ours on the official `@modelcontextprotocol/sdk` (its low-level
// `Server` and `StreamableHTTPServerTransport`, stateful sessions) that records every
// `tools/call` and every Authorization header, and can forget its sessions on demand (a
// restarted server: the client must initialise again).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { waitFor } from "./devserver.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const EVERYTHING = path.resolve(here, "../node_modules/@modelcontextprotocol/server-everything/dist/index.js");

/** A port nothing listens on (yet). */
export async function freePort() {
  const probe = net.createServer();
  await new Promise((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  return port;
}

/** `@modelcontextprotocol/server-everything streamableHttp` on a free port. */
export async function startEverything() {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  await waitFor(() => /listening on port/.test(output), { timeoutMs: 30_000, what: "server-everything to listen", detail: () => output });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    output: () => output,
    close: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once("exit", r), child.kill("SIGTERM")))),
  };
}

const COUNT_SCHEMA = { type: "object", properties: { label: { type: "string" } }, required: ["label"] };

/** Our counting MCP server; `token`, when set, is the bearer it requires. */
export async function startCounter({ token } = {}) {
  const calls = [];
  const authorizations = [];
  let initializations = 0;
  const sessions = new Map();
  const mcpServer = () => {
    const server = new Server({ name: "counter", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: "count", description: "Counts this call (a side effect)", inputSchema: COUNT_SCHEMA },
        { name: "peek", description: "How many counted calls so far", inputSchema: { type: "object", properties: {} } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { name, arguments: args = {}, _meta } = request.params;
      if (name === "peek") return { content: [{ type: "text", text: `counted ${calls.length}` }] };
      calls.push({ name, args, meta: _meta });
      return { content: [{ type: "text", text: `call ${calls.length}: ${args.label}` }] };
    });
    return server;
  };
  const httpServer = http.createServer(async (req, res) => {
    authorizations.push(req.headers.authorization);
    if (token && req.headers.authorization !== `Bearer ${token}`) return res.writeHead(401).end();
    let body = "";
    for await (const piece of req) body += piece;
    const sessionId = req.headers["mcp-session-id"];
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport && sessionId) {
      // The transport's own answer for a session it does not know (the spec's 404).
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
    }
    if (!transport) {
      initializations++;
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      await mcpServer().connect(transport);
    }
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  await new Promise((r) => httpServer.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${httpServer.address().port}/mcp`,
    calls,
    authorizations,
    initializations: () => initializations,
    forgetSessions: () => sessions.clear(),
    close: () => new Promise((r) => { httpServer.closeAllConnections(); httpServer.close(r); }),
  };
}
