// The CopilotKit runtime protocol, driven by the REAL CopilotKit client
// (@copilotkit/core, the framework-neutral core behind CopilotKit's React hooks)
// pointed straight at a host's `/copilotkit` routes: no Node runtime between.
// Every flow takes a `server` with a base `url` (a dev server, the Lambda
// emulator's function URL, a Worker); the flows marked "slow" need a host whose
// runs stream slowly (DEMO_TOKEN_DELAY_MS), so that they can be joined or stopped.
import assert from "node:assert/strict";
import { CopilotKitCore, ɵInterruptState as InterruptState, ɵcreateThreadStore as createThreadStore } from "@copilotkit/core";
import { postJson, request, sseEvents, sseFrames, waitFor } from "./devserver.mjs";
import { ledger, uid, userMessage } from "./flows.mjs";

// CopilotKitCore only connects to a runtime in a browser (`typeof window`): Node's
// globals (fetch, Headers, AbortController, EventTarget) are all it uses of one.
globalThis.window ??= globalThis;

/** The name of the host's primary agent (from /healthz). */
export async function agentNameOf(server) {
  const r = await request(`${server.url}/healthz`);
  assert.equal(r.status, 200, r.text);
  assert.equal(typeof r.json?.agent, "string", r.text);
  return r.json.agent;
}

/** A fresh CopilotKit "page" connected to `runtimeUrl`: resolves once the agents are known. */
async function connectCore(runtimeUrl, options = {}) {
  const core = new CopilotKitCore({ runtimeUrl, ...options });
  const errors = [];
  core.subscribe({ onError: ({ error, code }) => errors.push(`${code}: ${error?.message}`) });
  await waitFor(
    () => {
      if (core.runtimeConnectionStatus === "error") throw Object.assign(new Error(errors.join("; ")), { fatal: true });
      return core.runtimeConnectionStatus === "connected";
    },
    { timeoutMs: 20_000, what: "CopilotKit to connect to the runtime" },
  );
  return { core, errors };
}

/** Counts the text deltas an agent applies (streamed text, as the chat UI renders it). */
function watchText(agent) {
  const seen = { deltas: [], runsFinished: 0 };
  agent.subscribe({
    onTextMessageContentEvent: ({ event }) => {
      seen.deltas.push(event.delta);
    },
    onRunFinishedEvent: () => {
      seen.runsFinished += 1;
    },
  });
  return seen;
}

const assistantText = (agent) =>
  agent.messages
    .filter((m) => m.role === "assistant" && typeof m.content === "string")
    .map((m) => m.content)
    .join("\n");

async function thread(server, threadId) {
  const r = await request(`${server.url}/threads/${encodeURIComponent(threadId)}`);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/** The refund flow's first run through CopilotKit: ends on the approval interrupt. */
async function refundUntilInterrupt(core, agentName, orderId) {
  const agent = core.getAgent(agentName);
  assert.ok(agent, `agent ${agentName} must be registered`);
  const threadId = uid("ck-thread");
  agent.threadId = threadId;
  agent.addMessage(userMessage(`Refund order ${orderId}`));
  const seen = watchText(agent);
  await core.runAgent({ agent });
  return { agent, threadId, seen };
}

/** GET /info lists the agent in SSE mode, and CopilotKit registers it over the REST routes. */
export async function assertDiscovery(server) {
  const agentName = await agentNameOf(server);
  const raw = await request(`${server.url}/copilotkit/info`);
  assert.equal(raw.status, 200, raw.text);
  assert.equal(raw.json.mode, "sse");
  assert.equal(typeof raw.json.version, "string");
  assert.equal(raw.json.agents[agentName].name, agentName);
  assert.equal(raw.json.agents[agentName].capabilities.humanInTheLoop.supported, true);

  const { core } = await connectCore(`${server.url}/copilotkit`);
  assert.equal(core.runtimeTransport, "rest", "GET /info answered, so CopilotKit uses the REST routes");
  assert.deepEqual(Object.keys(core.agents), [agentName]);
  const agent = core.getAgent(agentName);
  assert.equal(agent.constructor.name, "ProxiedCopilotRuntimeAgent");
  assert.deepEqual(await agent.getCapabilities(), raw.json.agents[agentName].capabilities);
}

/** Unknown agents and methods, and a run without a thread, are JSON 4xx before any stream. */
export async function assertUnknownsRefused(server) {
  const agentName = await agentNameOf(server);
  const input = { threadId: uid("t"), runId: uid("r"), messages: [userMessage("hi")] };
  for (const path of ["agent/nope/run", "agent/nope/connect", "agent/nope/stop/t"]) {
    const r = await postJson(`${server.url}/copilotkit/${path}`, input);
    assert.equal(r.status, 404, `${path}: ${r.text}`);
    assert.equal(r.json.code, "AGENT_NOT_FOUND");
    assert.equal(typeof r.json.message, "string");
  }
  const envelope = await postJson(`${server.url}/copilotkit`, { method: "agent/run", params: { agentId: "nope" }, body: input });
  assert.equal(envelope.status, 404, envelope.text);
  assert.equal(envelope.json.code, "AGENT_NOT_FOUND");
  const unknown = await postJson(`${server.url}/copilotkit`, { method: "threads/list" });
  assert.equal(unknown.status, 404, unknown.text);
  assert.equal(unknown.json.code, "METHOD_NOT_FOUND");
  const noThread = await postJson(`${server.url}/copilotkit/agent/${agentName}/run`, { runId: "r", messages: [] });
  assert.equal(noThread.status, 400, noThread.text);
  assert.equal(noThread.json.code, "INVALID_INPUT");
}

/** A run streams text and ends on the interrupt; CopilotKit's interrupt API resolves it; one refund. */
export async function assertRunResolvedThroughInterruptApi(server, orderId) {
  const agentName = await agentNameOf(server);
  const { core } = await connectCore(`${server.url}/copilotkit`);
  const { agent, threadId, seen } = await refundUntilInterrupt(core, agentName, orderId);
  assert.ok(seen.deltas.length > 1, `text arrives as several deltas, got ${seen.deltas.length}`);
  assert.match(assistantText(agent), new RegExp(orderId));
  assert.equal(agent.pendingInterrupts.length, 1, "the approval interrupt is pending on the agent");
  const [interrupt] = agent.pendingInterrupts;
  assert.equal(interrupt.reason, "tool_call");
  assert.equal(agent.state.order?.orderId, orderId, "STATE_SNAPSHOT reached the agent");
  assert.equal((await thread(server, threadId)).status, "interrupted");

  // CopilotKit's interrupt state (what its framework adapters use) builds the resume.
  const interrupts = new InterruptState();
  interrupts.setStandard(agent.pendingInterrupts);
  const action = interrupts.resolve({ approved: true }, interrupt.id);
  assert.equal(action.kind, "resume", JSON.stringify(action));
  assert.deepEqual(action.resume.map((e) => [e.interruptId, e.status]), [[interrupt.id, "resolved"]]);
  const before = (await ledger(server, orderId)).refunds;
  await core.runAgent({ agent, resume: action.resume });
  assert.deepEqual(agent.pendingInterrupts, [], "nothing pending after the resume");
  assert.equal((await ledger(server, orderId)).refunds, before + 1, "refunded exactly once");
  assert.equal((await thread(server, threadId)).status, "idle");
}

/** After a reload, `connect` re-presents history, state and the pending interrupt; cancelling it refunds nothing. */
export async function assertReconnectAfterReload(server, orderId) {
  const agentName = await agentNameOf(server);
  const first = await connectCore(`${server.url}/copilotkit`);
  const { agent: original, threadId } = await refundUntilInterrupt(first.core, agentName, orderId);
  const [interrupt] = original.pendingInterrupts;
  assert.ok(interrupt, "the first page saw the interrupt");

  // A reload: a new CopilotKit core knows nothing but the thread id.
  const reloaded = await connectCore(`${server.url}/copilotkit`);
  const agent = reloaded.core.getAgent(agentName);
  agent.threadId = threadId;
  assert.equal(agent.messages.length, 0);
  await reloaded.core.connectAgent({ agent });
  assert.deepEqual(
    agent.messages.map((m) => m.id),
    original.messages.map((m) => m.id),
    "the stored history is back, message for message",
  );
  assert.match(assistantText(agent), new RegExp(orderId));
  assert.deepEqual(agent.state, original.state, "the stored state is back");
  assert.deepEqual(agent.pendingInterrupts.map((i) => i.id), [interrupt.id], "the approval card is shown again");
  assert.deepEqual(reloaded.errors, []);

  // Answer it from the reloaded page: cancelled, so no refund.
  const state = new InterruptState();
  state.setStandard(agent.pendingInterrupts);
  const action = state.cancel(interrupt.id);
  assert.equal(action.kind, "resume");
  const before = (await ledger(server, orderId)).refunds;
  await reloaded.core.runAgent({ agent, resume: action.resume });
  assert.deepEqual(agent.pendingInterrupts, []);
  assert.equal((await ledger(server, orderId)).refunds, before, "a cancelled approval refunds nothing");

  // A third page: nothing pending any more, the whole conversation is there.
  const third = await connectCore(`${server.url}/copilotkit`);
  const again = third.core.getAgent(agentName);
  again.threadId = threadId;
  await third.core.connectAgent({ agent: again });
  assert.deepEqual(again.pendingInterrupts, []);
  assert.deepEqual(
    again.messages.map((m) => m.id),
    (await thread(server, threadId)).messages.map((m) => m.id),
  );
}

/** (slow) A second page's `connect` joins a live run and follows it to its end. */
export async function assertConnectJoinsLiveRun(slow, orderId) {
  const agentName = await agentNameOf(slow);
  const runner = await connectCore(`${slow.url}/copilotkit`);
  const agent = runner.core.getAgent(agentName);
  const threadId = uid("ck-live");
  agent.threadId = threadId;
  agent.addMessage(userMessage(`Refund order ${orderId}`));
  const seen = watchText(agent);
  const running = runner.core.runAgent({ agent });
  await waitFor(() => seen.deltas.length >= 2, { timeoutMs: 30_000, what: "the first streamed words" });
  const view = await thread(slow, threadId);
  assert.equal(view.status, "running", "the run is still in progress when the second page connects");
  assert.deepEqual(view.pendingInterrupts, []);

  const watcher = await connectCore(`${slow.url}/copilotkit`);
  const joined = watcher.core.getAgent(agentName);
  joined.threadId = threadId;
  const joinedSeen = watchText(joined);
  await watcher.core.connectAgent({ agent: joined });
  await running;
  // The connect stream ended only with the run: it carries the run's interrupt, which
  // did not exist when it was opened, and the same final text as the runner.
  assert.equal(joined.pendingInterrupts.length, 1, "the live run's interrupt reached the joined page");
  assert.deepEqual(joined.pendingInterrupts.map((i) => i.id), agent.pendingInterrupts.map((i) => i.id));
  assert.ok(joinedSeen.deltas.length > 1, "the joined page received the streamed text");
  assert.equal(assistantText(joined), assistantText(agent));
}

/** (slow) CopilotKit's stopAgent cancels the run on the server; a later stop finds nothing to stop. */
export async function assertStopAgentCancels(slow, orderId) {
  const agentName = await agentNameOf(slow);
  const { core } = await connectCore(`${slow.url}/copilotkit`);
  const agent = core.getAgent(agentName);
  const threadId = uid("ck-stop");
  agent.threadId = threadId;
  agent.addMessage(userMessage(`Refund order ${orderId}`));
  const seen = watchText(agent);
  const running = core.runAgent({ agent });
  await waitFor(() => seen.deltas.length >= 1, { timeoutMs: 30_000, what: "the first streamed word" });
  core.stopAgent({ agent });
  await running;
  // The client dropped its stream; only the stop request can cancel the run (an
  // abandoned run would go on to its interrupt).
  const view = await waitFor(
    async () => {
      const v = await thread(slow, threadId);
      return v.lastRun?.status !== "running" ? v : undefined;
    },
    { timeoutMs: 30_000, what: "the run to end" },
  );
  assert.equal(view.lastRun.status, "cancelled", JSON.stringify(view.lastRun));
  assert.deepEqual(view.pendingInterrupts, []);

  // The raw answers: nothing left to stop.
  const raw = await postJson(`${slow.url}/copilotkit/agent/${agentName}/stop/${threadId}`, {});
  assert.equal(raw.status, 200, raw.text);
  assert.equal(raw.json.stopped, false);
  const named = await postJson(`${slow.url}/copilotkit/agent/${agentName}/stop/${threadId}`, { runId: view.lastRun.runId });
  assert.equal(named.json.stopped, false);
  assert.equal(named.json.runId, view.lastRun.runId);
}

/** (slow) A REST stop while a run streams answers stopped:true, and the stream ends cancelled. */
export async function assertRestStopWhileStreaming(slow, orderId) {
  const agentName = await agentNameOf(slow);
  const threadId = uid("ck-rawstop");
  const runId = uid("run");
  const stream = fetch(`${slow.url}/copilotkit/agent/${agentName}/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] }),
  }).then(async (res) => ({ status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }));
  // Until the run claims the thread, GET /threads answers 404 (and waitFor retries).
  await waitFor(async () => (await thread(slow, threadId)).status === "running", {
    timeoutMs: 30_000,
    what: "the run to start",
  });
  const stop = await postJson(`${slow.url}/copilotkit/agent/${agentName}/stop/${threadId}`, { runId });
  assert.equal(stop.status, 200, stop.text);
  assert.deepEqual(stop.json, { threadId, runId, stopped: true });
  const { status, bytes } = await stream;
  assert.equal(status, 200);
  const last = sseEvents(bytes).at(-1);
  assert.equal(last.type, "RUN_FINISHED");
  assert.equal(last.outcome?.type, "cancelled", JSON.stringify(last));
}

/** Single-route mode: discovery, a run, connect and stop through the POST /copilotkit envelope. */
export async function assertSingleRouteMode(server, orderId) {
  const agentName = await agentNameOf(server);
  const info = await postJson(`${server.url}/copilotkit`, { method: "info" });
  assert.equal(info.status, 200, info.text);
  assert.deepEqual(info.json, (await request(`${server.url}/copilotkit/info`)).json);

  const { core } = await connectCore(`${server.url}/copilotkit`, { runtimeTransport: "single" });
  assert.equal(core.runtimeTransport, "single");
  const { agent, threadId, seen } = await refundUntilInterrupt(core, agentName, orderId);
  assert.ok(seen.deltas.length > 1);
  assert.equal(agent.pendingInterrupts.length, 1);

  const reloaded = await connectCore(`${server.url}/copilotkit`, { runtimeTransport: "single" });
  const again = reloaded.core.getAgent(agentName);
  again.threadId = threadId;
  await reloaded.core.connectAgent({ agent: again });
  assert.deepEqual(again.pendingInterrupts.map((i) => i.id), agent.pendingInterrupts.map((i) => i.id));
  assert.deepEqual(again.messages.map((m) => m.id), agent.messages.map((m) => m.id));

  const stop = await postJson(`${server.url}/copilotkit`, {
    method: "agent/stop",
    params: { agentId: agentName, threadId },
  });
  assert.equal(stop.status, 200, stop.text);
  assert.equal(stop.json.stopped, false, "an interrupted thread has no run to stop");
}

/** `connect` on a thread that never ran is an empty event stream. */
export async function assertConnectToNewThreadIsEmpty(server) {
  const agentName = await agentNameOf(server);
  const r = await postJson(`${server.url}/copilotkit/agent/${agentName}/connect`, {
    threadId: uid("never"),
    runId: uid("r"),
    messages: [],
  });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers["content-type"], /text\/event-stream/);
  assert.deepEqual(sseEvents(r.bytes), []);
}

/**
 * (slow) A page that joined a live run through `connect` drops mid-run and reconnects
 * with `Last-Event-ID`: it gets only the run's frames after that id (with the join
 * prelude), up to the run's end; what it had plus what it got (by id) is the run's
 * recorded stream.
 */
export async function assertConnectRejoinsByLastEventId(slow, orderId) {
  const agentName = await agentNameOf(slow);
  const threadId = uid("ck-rejoin");
  const runId = uid("run");
  const running = fetch(`${slow.url}/agent`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId, runId, messages: [userMessage(`Refund order ${orderId}`)] }),
  });
  await waitFor(
    async () => {
      const r = await request(`${slow.url}/threads/${threadId}`);
      return r.status === 200 && r.json.status === "running";
    },
    { timeoutMs: 30_000, what: "the run to start" },
  );
  const connectUrl = `${slow.url}/copilotkit/agent/${agentName}/connect`;
  const body = JSON.stringify({ threadId, runId: uid("run"), messages: [] });
  const abort = new AbortController();
  const res = await fetch(connectUrl, { method: "POST", headers: { "content-type": "application/json" }, body, signal: abort.signal });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  let text = "";
  // Two words of the live run in, the page drops (keeping whole frames only).
  while ((text.match(/TEXT_MESSAGE_CONTENT/g) ?? []).length < 2) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the connect stream ended before the run streamed");
    text += Buffer.from(value).toString("utf8");
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  const had = sseFrames(Buffer.from(text.slice(0, text.lastIndexOf("\n\n") + 2))).filter((f) => f.data !== undefined);
  const live = had.filter((f) => f.id !== "0");
  assert.ok(had.some((f) => f.id === "0"), "the rehydration frames come first, id 0");
  const lastId = Number(live.at(-1).id);

  const again = await request(connectUrl, { method: "POST", body: JSON.parse(body), headers: { "last-event-id": String(lastId) } });
  assert.equal(again.status, 200, again.text);
  const got = sseFrames(again.bytes).filter((f) => f.data !== undefined);
  assert.ok(got.every((f) => f.id !== "0"), "a reconnect within the live run gets no rehydration again");
  assert.match(got.at(-1).data, /"type":"RUN_FINISHED"/);
  await (await running).text();
  const recorded = await request(`${slow.url}/threads/${threadId}/runs/${runId}/events`);
  const pairs = (list) => list.map((f) => [f.id, f.data]);
  const merged = [...live, ...got.filter((f) => Number(f.id) > lastId)];
  assert.deepEqual(pairs(merged), pairs(sseFrames(recorded.bytes)), "dropped and rejoined is not the run's stream");
}

/** One finished run of the demo on a new thread (through POST /agent); its id. */
async function newThread(server, prefix) {
  const threadId = uid(prefix);
  const input = { threadId, runId: uid("r"), messages: [userMessage("hello")] };
  const r = await postJson(`${server.url}/agent`, input);
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /RUN_FINISHED/);
  return threadId;
}

/**
 * CopilotKit's own thread store (`@copilotkit/core` 1.75) over the host's thread
 * endpoints, in `runtimeTransport` ("rest", or "single" for the resource envelope): the
 * list, its next page, rename, archive, unarchive and delete, each checked on the server.
 */
export async function assertThreadStore(server, runtimeTransport = "rest") {
  const agentName = await agentNameOf(server);
  const ids = [];
  for (let i = 0; i < 3; i += 1) ids.push(await newThread(server, `ck-list-${runtimeTransport}`));
  const { core } = await connectCore(`${server.url}/copilotkit`, { runtimeTransport });
  assert.equal(core.runtimeTransport, runtimeTransport);
  // What goes on the wire (the runtime fetch turns thread calls into envelopes in "single").
  const wire = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = typeof input === "string" ? input : input.url ?? String(input);
    if (url.includes("/copilotkit")) wire.push(`${init?.method ?? input.method ?? "GET"} ${url}`);
    return realFetch(input, init);
  };
  const store = createThreadStore({ fetch: core.ɵruntimeFetch });
  store.start();
  try {
    store.setContext({ runtimeUrl: `${server.url}/copilotkit`, headers: {}, agentId: agentName, limit: 2 });
    const ids_ = () => store.getState().threads.map((t) => t.id);
    await waitFor(() => !store.getState().isLoading && store.getState().threads.length === 2, {
      what: "the first page of threads",
      detail: () => `${store.getState().error?.message ?? ""} ${JSON.stringify(store.getState())}`,
    });
    assert.equal(store.getState().error, null);
    assert.deepEqual(ids_(), [ids[2], ids[1]], "the newest threads first");
    const first = store.getState().threads[0];
    assert.equal(first.agentId, agentName);
    assert.equal(first.archived, false);
    assert.ok(Date.parse(first.createdAt) > 0 && Date.parse(first.lastRunAt) > 0, JSON.stringify(first));
    assert.ok(store.getState().nextCursor, "a next page");

    store.fetchNextPage();
    await waitFor(() => ids_().includes(ids[0]), { what: "the next page", detail: () => JSON.stringify(store.getState()) });

    const listed = async (query = "") => {
      const r = await request(`${server.url}/threads?limit=20${query}`);
      assert.equal(r.status, 200, r.text);
      return r.json.threads;
    };
    await store.renameThread(ids[1], "Renamed by CopilotKit");
    assert.equal((await listed()).find((t) => t.id === ids[1])?.name, "Renamed by CopilotKit");

    await store.archiveThread(ids[2]);
    assert.ok(!(await listed()).some((t) => t.id === ids[2]), "archived: out of the default list");
    assert.equal((await listed("&includeArchived=true")).find((t) => t.id === ids[2])?.archived, true);
    await store.unarchiveThread(ids[2]);
    assert.ok((await listed()).some((t) => t.id === ids[2]), "unarchived: back");

    await store.deleteThread(ids[0]);
    const gone = await request(`${server.url}/threads/${encodeURIComponent(ids[0])}`);
    assert.equal(gone.status, 404, gone.text);
    assert.ok(!(await listed("&includeArchived=true")).some((t) => t.id === ids[0]));
  } finally {
    store.stop();
    globalThis.fetch = realFetch;
  }
  const rest = wire.filter((line) => line.includes("/copilotkit/threads"));
  if (runtimeTransport === "single") {
    assert.deepEqual(rest, [], "single-route: every thread call is an envelope");
    assert.ok(wire.filter((line) => line.startsWith("POST") && line.endsWith("/copilotkit")).length >= 6, wire.join("\n"));
  } else {
    assert.ok(rest.length >= 6, wire.join("\n"));
  }
}
