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
import { createRemoteJWKSet, jwtVerify } from "jose";
import { OAuth2Server } from "oauth2-mock-server";
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

/** Our counting MCP server; `token`, when set, is the bearer it requires; `authorize`,
 * when set, decides on each Authorization header instead (resolves true to let it in). */
export async function startCounter({ token, authorize } = {}) {
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
    if (authorize && !(await authorize(req.headers.authorization))) {
      return res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end();
    }
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

/**
 * An OAuth authorization server for the client credentials grant (oauth2-mock-server, its
 * RS256 tokens and JWKS) that admits one client (`clientId`/`clientSecret`, HTTP Basic)
 * and puts the requested `audience` (else `resource`) in the token's `aud`, as Auth0-style
 * servers do. Records every token request.
 */
export async function startIssuer({ clientId, clientSecret }) {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  const requests = [];
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}`;
  server.service.on("beforeTokenSigning", (token, req) => {
    token.payload.aud = req.body.audience ?? req.body.resource;
    token.payload.sub = clientId;
    // Each token its own, as real issuers make them: without an id, two tokens asked for in
    // the same second are the same bytes, and a token replacing a revoked one would be it.
    token.payload.jti = randomUUID();
  });
  server.service.on("beforeResponse", (response, req) => {
    requests.push({ body: { ...req.body }, authorization: req.headers.authorization });
    if (req.headers.authorization !== basic) {
      response.statusCode = 401;
      response.body = { error: "invalid_client", error_description: "unknown client or wrong secret" };
    }
  });
  const url = server.issuer.url;
  return {
    url,
    tokenUrl: `${url}/token`,
    requests,
    close: () => server.stop(),
  };
}

/** A counting MCP server that lets in only bearer tokens of `issuer` meant for it (`aud`
 * is its own URL), signed with the issuer's published keys; `revoke(token)` refuses one. */
export async function startVault(issuer) {
  const jwks = createRemoteJWKSet(new URL(`${issuer.url}/jwks`));
  const revoked = new Set();
  const accepted = [];
  let url;
  const counter = await startCounter({
    authorize: async (authorization) => {
      const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
      if (!token || revoked.has(token)) return false;
      try {
        await jwtVerify(token, jwks, { issuer: issuer.url, audience: url });
      } catch {
        return false;
      }
      accepted.push(token);
      return true;
    },
  });
  url = counter.url;
  return { ...counter, accepted, revoke: (token) => revoked.add(token) };
}
