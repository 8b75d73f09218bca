// Test-side JWT signing for A2A push notifications.
//
// @a2a-js/sdk 1.3.0 cannot sign pushes: its DefaultPushNotificationSender only
// sends a static `Authorization: {scheme} {credentials}` or the token header
// (its `jose` import serves agent-card signatures). So the remote agent keeps
// the SDK's request handler, task and push-config stores and v1 serializer,
// and swaps in JwtPushSender (the SDK's public PushNotificationSender
// interface), which adds `Authorization: Bearer <jwt>` signed over the exact
// body — the A2A topic docs' asymmetric-key flow — next to the token header.
//
// * startSigner() → {jwksUrl, rsa, ec, fetches, close()}: RS256 and ES256 keys
//   (node:crypto) and their JWKS served at /.well-known/jwks.json.
// * makeKey(alg, kid), signJwt(claims, key), pushClaims(body, taskId, overrides)
//   for hand-made tokens in negative tests.

import http from "node:http";
import { createHash, generateKeyPairSync, randomUUID, sign } from "node:crypto";
import { V1PushNotificationSerializer } from "@a2a-js/sdk/server";

const b64url = (value) => Buffer.from(value).toString("base64url");

/** A fresh key pair; `jwk` is the public half as published. */
export function makeKey(alg, kid) {
  const { privateKey, publicKey } =
    alg === "RS256"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { alg, kid, privateKey, jwk: { ...publicKey.export({ format: "jwk" }), kid, alg, use: "sig" } };
}

/** A compact JWS over `claims` (ES256 signatures in the JOSE r||s form, not DER). */
export function signJwt(claims, key, header = {}) {
  const input = `${b64url(JSON.stringify({ alg: key.alg, typ: "JWT", kid: key.kid, ...header }))}.${b64url(JSON.stringify(claims))}`;
  const signer = key.alg === "ES256" ? { key: key.privateKey, dsaEncoding: "ieee-p1363" } : key.privateKey;
  return `${input}.${b64url(sign("sha256", Buffer.from(input), signer))}`;
}

export const sha256Hex = (body) => createHash("sha256").update(body).digest("hex");

/** The claims of one push: now, single-use id, task, and the body's SHA-256. */
export function pushClaims(body, taskId, overrides = {}) {
  return {
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    taskId,
    request_body_sha256: sha256Hex(body),
    ...overrides,
  };
}

export async function startSigner() {
  const rsa = makeKey("RS256", "push-rsa-1");
  const ec = makeKey("ES256", "push-ec-1");
  let fetches = 0;
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/.well-known/jwks.json") {
      fetches += 1;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [rsa.jwk, ec.jwk] }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    jwksUrl: `http://127.0.0.1:${server.address().port}/.well-known/jwks.json`,
    rsa,
    ec,
    get fetches() {
      return fetches;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The SDK's PushNotificationSender interface, signing each push with `key`.
 * A task's pushes go out one after another (as the SDK's own sender does);
 * every attempt is recorded in `sent` ({url, headers, body, claims, status}).
 */
export class JwtPushSender {
  constructor(store, key) {
    this.store = store;
    this.key = key;
    this.serializer = new V1PushNotificationSerializer();
    this.chains = new Map();
    this.sent = [];
  }

  async send(streamResponse, context) {
    const { $case, value } = streamResponse.payload;
    const taskId = $case === "task" ? value.id : value.taskId;
    if (!taskId) return;
    const configs = await this.store.load(taskId, context);
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(() => Promise.all(configs.map((config) => this.dispatch(streamResponse, config, taskId))));
    this.chains.set(taskId, next);
    await next;
  }

  async dispatch(streamResponse, config, taskId) {
    const { body, contentType } = this.serializer.serialize(streamResponse);
    const claims = pushClaims(body, taskId);
    const headers = { "content-type": contentType, authorization: `Bearer ${signJwt(claims, this.key)}` };
    if (config.token) headers["x-a2a-notification-token"] = config.token;
    const record = { url: config.url, headers, body, claims, status: 0 };
    this.sent.push(record);
    try {
      const res = await fetch(config.url, { method: "POST", headers, body, signal: AbortSignal.timeout(5_000) });
      record.status = res.status;
    } catch (err) {
      record.error = String(err);
    }
  }
}
