// Handoff console: wires the URL, the connection settings, the AG-UI agent and the panels.
import { createAgent, createFollowAgent, describeError, fetchThread, forAgent, toolArgValue, toolCallArgs, uuid } from "./agent.js";
import { Sidebar } from "./sidebar.js";
import { Bell } from "./bell.js";
import { subscriber } from "./run.js";
import { Conversation } from "./conversation.js";
import { Approvals, StatePanel, TasksPanel } from "./panels.js";
import { wireControls } from "./controls.js";
import { defaultEndpoint, loadToken, newThreadId, normaliseEndpoint, readParams, saveToken, setUrl, threadUrl } from "./settings.js";

const $ = (id) => document.getElementById(id);
const ui = {
  status: $("status"),
  error: $("error"),
  errorText: $("error-text"),
  threadLink: $("thread-link"),
  endpoint: $("endpoint"),
  token: $("token"),
  note: $("connection-note"),
  composer: $("composer"),
  message: $("message"),
  send: $("send"),
};

const cfg = { endpoint: defaultEndpoint(), token: "", threadId: "" };
let agent = null;
let running = false;
let loading = false;
let pending = [];
let generation = 0; // bumps on thread switch: late answers of an old thread are ignored
let pollTimer = null;

const conversation = new Conversation($("conversation"));
const statePanel = new StatePanel($("state"));
const tasksPanel = new TasksPanel($("tasks"));
const approvals = new Approvals($("approvals"), { onResume: (answers) => resume(answers), hint: argHint, args: callArgs });
const sidebar = new Sidebar($("sidebar"), cfg, {
  open: (threadId) => openThread(threadId),
  newThread: () => switchThread(newThreadId(), { push: true }),
  deleted(threadId) {
    if (threadId === cfg.threadId) switchThread(newThreadId(), { push: true });
  },
  showError,
});
const bell = new Bell($("bell"), cfg, { open: (threadId) => openThread(threadId) });

/** Example values for the form: the arguments of the tool call the interrupt is about. */
function argHint(interrupt, path) {
  return toolArgValue(agent ? agent.messages : [], interrupt.toolCallId, path[path.length - 1]);
}

/** The proposed arguments of the tool call the interrupt is about (the policy's bounds). */
function callArgs(interrupt) {
  return toolCallArgs(agent ? agent.messages : [], interrupt.toolCallId);
}

function showError(text) {
  ui.errorText.textContent = text;
  ui.error.hidden = false;
}

function clearError() {
  ui.errorText.textContent = "";
  ui.error.hidden = true;
}

function refreshStatus() {
  const text = loading ? "Loading…" : running ? "Running…" : pending.length ? "Waiting for approval" : "Idle";
  if (ui.status.textContent !== text) ui.status.textContent = text;
  ui.send.disabled = running || loading;
  approvals.setBusy(running || loading);
  document.body.dataset.busy = running ? "true" : "false";
}

function showThreadLink() {
  ui.threadLink.href = threadUrl(cfg.threadId);
  ui.threadLink.textContent = cfg.threadId;
}

function setPending(list) {
  pending = Array.isArray(list) ? list : [];
  approvals.render(pending);
  if (agent) agent.pendingInterrupts = forAgent(pending);
}

function freshAgent(messages = [], state = {}) {
  agent = createAgent({ endpoint: cfg.endpoint, token: cfg.token, threadId: cfg.threadId, messages, state });
  agent.pendingInterrupts = forAgent(pending);
}

function resetView() {
  conversation.clear();
  statePanel.set({});
  tasksPanel.set([]);
  stopPolling();
  setPending([]);
}

function applyThread(view) {
  const messages = Array.isArray(view.messages) ? view.messages : [];
  const state = view.state && typeof view.state === "object" ? view.state : {};
  conversation.clear();
  conversation.render(messages);
  statePanel.set(state);
  freshAgent(messages, state);
  setPending(Array.isArray(view.pendingInterrupts) ? view.pendingInterrupts : []);
  showTasks(view.a2aTasks);
}

function showTasks(tasks) {
  const live = tasksPanel.set(tasks);
  if (live && !pollTimer) pollTimer = setInterval(pollTasks, 5000);
  if (!live) stopPolling();
}

function stopPolling() {
  clearInterval(pollTimer);
  pollTimer = null;
}

async function pollTasks() {
  const gen = generation;
  try {
    const view = await fetchThread(cfg);
    if (gen === generation && view) showTasks(view.a2aTasks);
  } catch {
    /* the next poll or run will tell */
  }
}

/** Rehydrates the thread from `GET /threads/{id}`; follows a run still streaming. */
async function loadThread({ follow = true } = {}) {
  const gen = ++generation;
  loading = true;
  refreshStatus();
  try {
    const view = await fetchThread(cfg);
    if (gen !== generation) return;
    if (!view) {
      resetView();
      freshAgent();
    } else {
      applyThread(view);
      const last = view.lastRun;
      if (follow && view.status === "running" && last && last.runId) {
        loading = false;
        await followRun(last.runId, gen);
        return;
      }
    }
  } catch (err) {
    if (gen !== generation) return;
    showError(describeError(err, cfg.endpoint).text);
    if (!agent) freshAgent();
  } finally {
    if (gen === generation) {
      loading = false;
      refreshStatus();
    }
  }
}

/** Runs `runner` (an agent) once; returns the tracking record. Never throws. */
async function execute(runner, params) {
  const gen = generation;
  const track = { started: false, finished: false, runError: false, failure: null, error: null, interrupts: null };
  running = true;
  refreshStatus();
  try {
    await runner.runAgent(params, subscriber(track, { conversation, statePanel, showError }));
  } catch (err) {
    track.failure = err;
  } finally {
    if (track.failure !== null) {
      track.error = describeError(track.failure, cfg.endpoint);
      if (gen === generation) showError(track.error.text);
    }
    if (gen === generation) running = false;
  }
  if (gen !== generation) return track;
  if (track.interrupts) setPending(track.interrupts);
  refreshStatus();
  sidebar.refresh();
  bell.refresh();
  if (track.started || !track.error) afterRun(gen, track);
  return track;
}

/** After a run: A2A tasks (and, after a failure mid-run, the pending interrupts) from the server. */
async function afterRun(gen, track) {
  try {
    const view = await fetchThread(cfg);
    if (gen !== generation || !view || running) return;
    showTasks(view.a2aTasks);
    if ((track.runError || (track.error && track.started)) && Array.isArray(view.pendingInterrupts)) {
      setPending(view.pendingInterrupts);
      refreshStatus();
    }
  } catch {
    /* the run's own outcome is already shown */
  }
}

async function send(text) {
  if (running || loading) return;
  if (pending.length) {
    showError("Answer the approval first: approve, deny or cancel it before sending a new message.");
    approvals.cards.values().next().value?.focus();
    return;
  }
  clearError();
  setUrl({ thread: cfg.threadId });
  const message = { id: `msg-${uuid()}`, role: "user", content: text };
  agent.messages = [...agent.messages, message];
  conversation.render(agent.messages);
  ui.message.value = "";
  const track = await execute(agent, { runId: `run-${uuid()}` });
  if (track.error && !track.started) {
    // Refused before the stream: the message was not recorded, give it back.
    agent.messages = agent.messages.filter((m) => m.id !== message.id);
    conversation.render(agent.messages);
    if (!ui.message.value) ui.message.value = text;
  }
}

async function resume(answers) {
  if (running || loading) return;
  clearError();
  approvals.clearErrors();
  agent.pendingInterrupts = forAgent(pending);
  const track = await execute(agent, { runId: `run-${uuid()}`, resume: answers });
  // Cards still shown still need an answer (a refused or failed resume).
  approvals.reopenAll();
  if (track.error && !track.started) approvals.refused(track.error.text);
}

async function followRun(runId, gen) {
  const follower = createFollowAgent({
    endpoint: cfg.endpoint,
    token: cfg.token,
    threadId: cfg.threadId,
    runId,
    messages: agent.messages,
    state: agent.state,
  });
  const track = await execute(follower, { runId });
  if (gen !== generation) return;
  await loadThread({ follow: !track.error });
}

function switchThread(threadId, { push }) {
  if (agent && running) agent.abortRun?.();
  generation += 1;
  running = false;
  cfg.threadId = threadId;
  setUrl({ thread: threadId }, { push });
  showThreadLink();
  clearError();
  resetView();
  freshAgent();
  refreshStatus();
  sidebar.refresh();
}

/** Opens an existing thread (from the sidebar or the approvals inbox). */
function openThread(threadId) {
  if (threadId === cfg.threadId && !running) {
    loadThread();
    return;
  }
  if (agent && running) agent.abortRun?.();
  running = false;
  cfg.threadId = threadId;
  setUrl({ thread: threadId }, { push: true });
  showThreadLink();
  clearError();
  resetView();
  loadThread();
  sidebar.refresh();
}

/** Connection panel → Save. Returns an error sentence or null. */
function saveConnection(endpointText, tokenText) {
  const endpoint = normaliseEndpoint(endpointText);
  if (!endpoint) return "The endpoint must be an http:// or https:// URL.";
  const token = tokenText.trim();
  saveToken(endpoint, token);
  const changed = endpoint !== cfg.endpoint || token !== cfg.token;
  cfg.endpoint = endpoint;
  cfg.token = token;
  ui.endpoint.value = endpoint;
  setUrl({ endpoint: endpoint === defaultEndpoint() ? null : endpoint });
  showThreadLink();
  clearError();
  if (changed && !running) loadThread();
  if (changed) {
    sidebar.refresh();
    bell.refresh();
  }
  return null;
}

/** Back / forward between threads. */
function urlChanged() {
  const params = readParams();
  if (!params.thread || params.thread === cfg.threadId) return;
  if (agent && running) agent.abortRun?.();
  running = false;
  if (params.endpoint !== cfg.endpoint) {
    cfg.endpoint = params.endpoint;
    cfg.token = loadToken(cfg.endpoint);
    ui.token.value = cfg.token;
    bell.refresh();
  }
  ui.endpoint.value = cfg.endpoint;
  cfg.threadId = params.thread;
  showThreadLink();
  clearError();
  resetView();
  loadThread();
}

function boot() {
  const params = readParams();
  cfg.endpoint = params.endpoint;
  cfg.token = loadToken(cfg.endpoint);
  ui.endpoint.value = cfg.endpoint;
  ui.token.value = cfg.token;
  if (params.thread) {
    cfg.threadId = params.thread;
    showThreadLink();
    freshAgent();
    loadThread();
    sidebar.refresh();
  } else {
    switchThread(newThreadId(), { push: false });
  }
  bell.refresh();
}

wireControls(ui, {
  send,
  newThread() {
    switchThread(newThreadId(), { push: true });
  },
  saveConnection,
  urlChanged,
  dismiss: clearError,
});

boot();
