// TLS in front of a plain-HTTP test service (moto_server): a throwaway CA and a server
// certificate for 127.0.0.1 made with the `openssl` CLI, and a pass-through proxy that
// serves HTTPS (or plain HTTP) and records every connection and request, so a test or a
// bench can see when the TLS handshake happened and which connection carried what.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";

/**
 * A CA (EC P-256, CA:TRUE) and a server certificate it signed for IP 127.0.0.1 and
 * localhost (serverAuth), valid for a week, in a fresh temporary directory.
 * Returns {dir, caPath, ca, cert, key, remove()}; `ca`, `cert`, `key` are PEM strings.
 */
export function makeTestCerts() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "handoff-tls-"));
  const at = (name) => path.join(dir, name);
  const openssl = (...args) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl("req", "-x509", ...ec, "-keyout", at("ca.key"), "-out", at("ca.pem"), "-days", "7",
    "-subj", "/CN=Handoff test CA",
    "-addext", "basicConstraints=critical,CA:TRUE",
    "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  openssl("req", ...ec, "-keyout", at("server.key"), "-out", at("server.csr"), "-subj", "/CN=127.0.0.1");
  fs.writeFileSync(
    at("server.ext"),
    [
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature",
      "extendedKeyUsage=serverAuth",
      "",
    ].join("\n"),
  );
  openssl("x509", "-req", "-in", at("server.csr"), "-CA", at("ca.pem"), "-CAkey", at("ca.key"),
    "-CAcreateserial", "-days", "7", "-extfile", at("server.ext"), "-out", at("server.pem"));
  const read = (name) => fs.readFileSync(at(name), "utf8");
  return {
    dir,
    caPath: at("ca.pem"),
    ca: read("ca.pem"),
    cert: read("server.pem"),
    key: read("server.key"),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A pass-through proxy on a free loopback port in front of `target` (an http:// base URL):
 * HTTPS with `certs` (from makeTestCerts), plain HTTP without. Idle connections are kept for a
 * minute (Node's default of 5 s would close the one a function opened during its Init).
 *
 * Resolves to {endpoint, connections, calls, close()}:
 * - connections: [{id, at, secureAt}] in order (`performance.now()` stamps; `secureAt` when
 *   the TLS handshake finished, undefined over plain HTTP);
 * - calls: [{connection, start, end, target}] per request (`target` is its X-Amz-Target
 *   operation, e.g. GetItem), pushed when the upstream answer has been passed on.
 */
export async function startRecordingProxy(target, { certs } = {}) {
  const upstream = new URL(target);
  const connections = [];
  const calls = [];
  // Connection records by the client's port: the TLS socket a request arrives on and the TCP
  // socket under it share it.
  const byPort = new Map();
  const handler = (req, res) => {
    const start = performance.now();
    const connection = byPort.get(req.socket.remotePort)?.id;
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        // Hop-by-hop headers stay on the upstream hop: moto's development server answers
        // `Connection: close`, which passed on would make the client reconnect (and, over TLS,
        // handshake) for every request, where DynamoDB keeps the connection.
        const { connection: _connection, "keep-alive": _keepAlive, ...headers } = up.headers;
        res.writeHead(up.statusCode, headers);
        up.pipe(res);
        up.on("end", () =>
          calls.push({ connection, start, end: performance.now(), target: String(req.headers["x-amz-target"] ?? "").split(".").pop() }),
        );
      },
    );
    forward.on("error", (err) => {
      res.writeHead(502).end(String(err));
    });
    req.pipe(forward);
  };
  const server = certs ? https.createServer({ cert: certs.cert, key: certs.key }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  server.on("connection", (socket) => {
    const record = { id: connections.length + 1, at: performance.now(), secureAt: undefined };
    connections.push(record);
    byPort.set(socket.remotePort, record);
  });
  server.on("secureConnection", (socket) => {
    const record = byPort.get(socket.remotePort);
    if (record) record.secureAt = performance.now();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const scheme = certs ? "https" : "http";
  return {
    endpoint: `${scheme}://127.0.0.1:${server.address().port}`,
    connections,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
