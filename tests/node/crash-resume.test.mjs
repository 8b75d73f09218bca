// Issue 53: a run whose instance dies mid-way is finished by another. The demo's LLM mode
// on a dev server is killed (SIGKILL) after the model's first answer was journaled and
// before its tool ran; a second process sharing the SQLite file finishes the run. The
// model is asked once for that step, the tool runs once, and the client that reconnects
// with Last-Event-ID gets the rest of the run: with what it had, one stream that the
// strict verifier and the official @ag-ui/client accept.
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { makeDataDir, sseFrames, startDevServer, stopAllServers, waitFor } from "./lib/devserver.mjs";
import { assertStrict, describeRun, uid, userMessage } from "./lib/flows.mjs";
import { llmEnv, refundScript, standIn } from "./lib/model-standin.mjs";
import { runOfficial } from "./lib/official.mjs";

const TIMEOUT = 120_000;
const SHORT = { HANDOFF_LEASE_MS: "2000", HANDOFF_SWEEP_SECS: "1" };

/** The complete frames of `bytes` (a cut-off last one dropped), with numeric ids. */
function completeFrames(text) {
  const whole = text.slice(0, text.lastIndexOf("\n\n") + 2);
  return sseFrames(Buffer.from(whole)).filter((f) => f.data !== undefined);
}

/** SSE bytes of `frames`, as the server framed them. */
function reframe(frames) {
  return Buffer.from(frames.map((f) => `id: ${f.id}\ndata: ${f.data}\n\n`).join(""));
}

describe("crash resume: a run whose instance died is finished by another", { timeout: TIMEOUT }, () => {
  after(stopAllServers);

  test("kill -9 between a model answer and its tool: the other process finishes it, model once, tool once", async () => {
    const model = await standIn(refundScript("L9101"));
    const dataDir = makeDataDir();
    const env = { ...llmEnv(model), ...SHORT };
    const a = await startDevServer({ label: "crash-a", dataDir, env: { ...env, HANDOFF_TEST_FAULT: "hang-before-lookup" } });
    const threadId = uid("thread-crash");
    const runId = uid("run");
    const body = { threadId, runId, messages: [userMessage("Refund order L9101")] };

    // The client streams the run until the model's first answer (a get_order call) is in,
    // then A dies inside the tool, before it reads anything.
    const controller = new AbortController();
    const res = await fetch(`${a.url}/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    let seen = "";
    const reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body) seen += decoder.decode(chunk, { stream: true });
      } catch {
        // The server died under the stream.
      }
    })();
    await waitFor(() => model.requests.length === 1 && /TOOL_CALL_END/.test(seen), { what: "the model's first answer" });
    // The journal write follows the answer's end at once; the tool hangs on A.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await a.kill()).signal, "SIGKILL");
    controller.abort();
    await reading;
    const had = completeFrames(seen);
    const lastId = Number(had.at(-1).id);
    assert.ok(lastId > 0, "the frames carry ids");
    assert.ok(!/RUN_FINISHED|RUN_ERROR/.test(seen), "A died before the run ended");

    // B shares the store. The client reconnects there; the run is finished for it.
    const b = await startDevServer({ label: "crash-b", dataDir, env });
    const rejoin = await fetch(`${b.url}/threads/${threadId}/runs/${runId}/events`, {
      headers: { accept: "text/event-stream", "last-event-id": String(lastId) },
    });
    assert.equal(rejoin.status, 200);
    const rest = completeFrames(await rejoin.text());
    const fresh = rest.filter((f) => Number(f.id) > lastId);
    fresh.forEach((f, i) => assert.equal(Number(f.id), lastId + 1 + i, "no gap, no repeat"));
    const whole = [...had, ...fresh];
    const ended = JSON.parse(whole.at(-1).data);
    assert.equal(ended.type, "RUN_FINISHED", whole.at(-1).data);
    assert.equal(ended.outcome?.type, "interrupt", "the model proposed the refund, which waits for approval");

    const bytes = reframe(whole);
    await assertStrict(bytes, { threadId, runId });
    const official = await runOfficial(bytes, { threadId, runId });
    assert.equal(official.accepted, true, describeRun(official));

    // The model was asked once per step: its first answer was replayed, not asked again.
    assert.equal(model.requests.length, 2, "turn 1 once, turn 2 once");
    const toolMessages = model.requests[1].body.messages.filter((m) => m.role === "tool");
    assert.equal(toolMessages.length, 1, "get_order answered once");
    const results = whole.map((f) => JSON.parse(f.data)).filter((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(results.length, 1, "one get_order result");
    assert.match(results[0].content, /L9101/);
    await model.close();
  });

  test("without a client, B's sweep finishes the run by itself", async () => {
    const model = await standIn(refundScript("L9102"));
    const dataDir = makeDataDir();
    const env = { ...llmEnv(model), ...SHORT };
    const a = await startDevServer({ label: "sweep-a", dataDir, env: { ...env, HANDOFF_TEST_FAULT: "hang-before-lookup" } });
    const threadId = uid("thread-sweep");
    const runId = uid("run");
    const body = JSON.stringify({ threadId, runId, messages: [userMessage("Refund order L9102")] });
    const controller = new AbortController();
    const posted = fetch(`${a.url}/agent`, { method: "POST", headers: { "content-type": "application/json" }, body, signal: controller.signal })
      .then((r) => r.text())
      .catch(() => "");
    await waitFor(() => model.requests.length === 1, { what: "the model's first answer" });
    await new Promise((r) => setTimeout(r, 500));
    await a.kill();
    controller.abort();
    await posted;

    const b = await startDevServer({ label: "sweep-b", dataDir, env });
    const status = await waitFor(
      async () => {
        const res = await fetch(`${b.url}/threads/${threadId}/runs/${runId}`);
        const view = res.ok ? await res.json() : undefined;
        return view?.status === "interrupted" ? view : undefined;
      },
      { what: "B's sweep to finish the run", timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.equal(status.interrupts.length, 1);
    assert.equal(model.requests.length, 2, "turn 1 was replayed, not asked again");
    assert.match(b.logs(), /runs re-driven/);
    await model.close();
  });
});
