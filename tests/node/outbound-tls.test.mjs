// The native outbound client (ureq: model providers, key sets, A2A, MCP, webhooks) trusts
// the platform's root certificates, as the DynamoDB client does, and nothing compiled in:
// a model provider behind HTTPS whose certificate a throwaway CA signed is reached once
// SSL_CERT_FILE names that CA (rustls-native-certs reads it at the first TLS connection),
// and refused without it, the run ending with a stable RUN_ERROR code and nothing sent.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { postJson, sseEvents, startDevServer, stopAllServers } from "./lib/devserver.mjs";
import { uid, userMessage } from "./lib/flows.mjs";
import { dialects, llmEnv, standIn } from "./lib/model-standin.mjs";
import { makeTestCerts, startRecordingProxy } from "./lib/tls.mjs";

const TIMEOUT = 300_000;

describe("outbound TLS trusts the platform's roots", { timeout: TIMEOUT }, () => {
  let certs;
  let model;
  let proxy;
  before(async () => {
    certs = makeTestCerts();
    model = await standIn([]);
    proxy = await startRecordingProxy(model.base, { certs });
  });
  after(async () => {
    await stopAllServers();
    await proxy?.close();
    await model?.close();
    certs?.remove();
  });

  /** The demo's LLM mode pointed at the HTTPS proxy, with `extra` settings. */
  const env = (extra) => ({ ...llmEnv({ url: `${proxy.endpoint}/v1` }), ...extra });

  const chat = async (server, text) => {
    const threadId = uid("thread-tls");
    const res = await postJson(`${server.url}/agent`, { threadId, runId: uid("run"), messages: [userMessage(text)] });
    assert.equal(res.status, 200, res.text);
    return sseEvents(res.bytes);
  };

  test("a CA named by SSL_CERT_FILE is trusted: the model's answer streams over TLS", { timeout: TIMEOUT }, async () => {
    model.script([dialects.openai.text("Hello over TLS.")]);
    const server = await startDevServer({ label: "tls-trusted", env: env({ SSL_CERT_FILE: certs.caPath }) });
    const events = await chat(server, "Say hello");
    const text = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
    assert.equal(text, "Hello over TLS.", JSON.stringify(events));
    assert.equal(events.at(-1).type, "RUN_FINISHED");
    assert.ok(proxy.connections.length >= 1 && proxy.connections[0].secureAt !== undefined, "the handshake completed");
    assert.equal(model.requests.length, 1, "the provider got the request");
    await server.kill();
  });

  test("without it the platform's roots do not include the CA: refused, nothing sent, a stable code", { timeout: TIMEOUT }, async () => {
    model.script([dialects.openai.text("must never be sent")]);
    const before = model.requests.length;
    // Neither variable (undefined leaves it out of the child's environment): the machine's
    // own store (/etc/ssl) is what is read, and it has the system's CAs, not the test's.
    const server = await startDevServer({ label: "tls-untrusted", env: env({ SSL_CERT_FILE: undefined, SSL_CERT_DIR: undefined }) });
    const events = await chat(server, "Say hello");
    const failed = events.at(-1);
    assert.equal(failed.type, "RUN_ERROR", JSON.stringify(events));
    assert.match(failed.code ?? "", /^MODEL_/, JSON.stringify(failed));
    assert.doesNotMatch(JSON.stringify(failed), /127\.0\.0\.1|certificate|sk-stand-in/i, "no URL, TLS detail or key reaches the client");
    assert.equal(model.requests.length, before, "no request reached the provider");
    await server.kill();
  });
});
