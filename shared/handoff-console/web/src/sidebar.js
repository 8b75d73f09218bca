// The left column: the caller's threads (`GET /threads`: open, new, rename, archive,
// delete, load more) and an "Approvals" tab (`GET /approvals`: what the caller may
// answer across its tenant's threads, each card saying who asked and who may answer).
import { h } from "./dom.js";
import { apiJson, describeError } from "./agent.js";

const PAGE = 20;

function when(iso) {
  const t = Date.parse(iso || "");
  return Number.isFinite(t) ? new Date(t).toLocaleString() : "";
}

export class Sidebar {
  /**
   * `cfg` is the live connection ({endpoint, token, threadId}); `actions` has
   * `open(threadId)`, `newThread()`, `deleted(threadId)` and `showError(text)`.
   */
  constructor(root, cfg, actions) {
    this.cfg = cfg;
    this.actions = actions;
    this.cursor = null;
    this.generation = 0;
    this.threadsTab = h("button", { type: "button", role: "tab", id: "tab-threads", "aria-controls": "threads-panel", class: "tab", text: "Threads", onclick: () => this.show("threads") });
    this.approvalsTab = h("button", { type: "button", role: "tab", id: "tab-approvals", "aria-controls": "approvals-panel", class: "tab", text: "Approvals", onclick: () => this.show("approvals") });
    this.list = h("ul", { "data-testid": "thread-list", class: "thread-list", "aria-label": "Threads" });
    this.more = h("button", { type: "button", class: "btn small", text: "Load more", hidden: true, onclick: () => this.loadThreads({ more: true }) });
    this.threadsPanel = h(
      "div",
      { role: "tabpanel", id: "threads-panel", "aria-labelledby": "tab-threads", class: "tab-panel" },
      h("button", { type: "button", class: "btn small", text: "New", "aria-label": "New thread from the list", onclick: () => actions.newThread() }),
      this.list,
      this.more,
    );
    this.inbox = h("ul", { "data-testid": "approval-inbox", class: "thread-list", "aria-label": "Approvals waiting for you" });
    this.approvalsPanel = h("div", { role: "tabpanel", id: "approvals-panel", "aria-labelledby": "tab-approvals", class: "tab-panel", hidden: true }, this.inbox);
    root.append(h("div", { role: "tablist", class: "tabs", "aria-label": "Sidebar" }, this.threadsTab, this.approvalsTab), this.threadsPanel, this.approvalsPanel);
    this.show("threads", { load: false });
  }

  show(tab, { load = true } = {}) {
    const threads = tab === "threads";
    this.threadsTab.setAttribute("aria-selected", String(threads));
    this.approvalsTab.setAttribute("aria-selected", String(!threads));
    this.threadsPanel.hidden = !threads;
    this.approvalsPanel.hidden = threads;
    if (!load) return;
    if (threads) this.loadThreads();
    else this.loadApprovals();
  }

  /** Reloads whichever tab is shown (after a run, a switch of thread or connection). */
  refresh() {
    if (this.approvalsPanel.hidden) this.loadThreads();
    else this.loadApprovals();
  }

  async loadThreads({ more = false } = {}) {
    const gen = ++this.generation;
    const cursor = more && this.cursor ? `&cursor=${encodeURIComponent(this.cursor)}` : "";
    let page;
    try {
      page = await apiJson(this.cfg, "GET", `/threads?limit=${PAGE}${cursor}`);
    } catch (err) {
      if (gen === this.generation) this.list.replaceChildren(h("li", { class: "muted", text: describeError(err, this.cfg.endpoint).text }));
      return;
    }
    if (gen !== this.generation) return;
    if (!more) this.list.replaceChildren();
    for (const thread of page?.threads ?? []) this.list.append(this.threadItem(thread));
    if (!this.list.children.length) this.list.append(h("li", { class: "muted", text: "No threads yet." }));
    this.cursor = page?.nextCursor ?? null;
    this.more.hidden = !this.cursor;
  }

  threadItem(thread) {
    const title = thread.name || thread.id;
    const current = thread.id === this.cfg.threadId;
    const pending = thread.pendingInterrupts ? ` · ${thread.pendingInterrupts} pending` : "";
    const li = h(
      "li",
      { "data-testid": "thread-item", "data-thread-id": thread.id, "data-status": thread.status, class: current ? "thread-item current" : "thread-item" },
      h("button", { type: "button", class: "thread-open", "aria-current": current ? "true" : undefined, onclick: () => this.actions.open(thread.id) }, h("span", { class: "thread-title", text: title })),
      h("small", { class: "muted", text: `${thread.status}${pending} · ${when(thread.lastRunAt || thread.updatedAt)}` }),
    );
    const actions = h(
      "div",
      { class: "thread-actions" },
      h("button", { type: "button", class: "btn small", text: "Rename", onclick: () => this.renaming(li, thread) }),
      h("button", { type: "button", class: "btn small", text: "Archive", onclick: () => this.change(thread.id, { archived: true }) }),
      h("button", { type: "button", class: "btn small danger", text: "Delete", onclick: (e) => this.confirmDelete(e.currentTarget, thread.id) }),
    );
    li.append(actions);
    return li;
  }

  renaming(li, thread) {
    const input = h("input", { type: "text", value: thread.name || "", maxlength: "200", "aria-label": "Thread name" });
    const form = h(
      "form",
      { class: "rename", onsubmit: (e) => { e.preventDefault(); this.change(thread.id, { name: input.value.trim() }); } },
      input,
      h("button", { type: "submit", class: "btn small primary", text: "Save name" }),
    );
    li.querySelector(".thread-actions")?.replaceWith(form);
    input.focus();
  }

  /** Delete asks once more on the same button, without a dialog. */
  confirmDelete(button, threadId) {
    if (button.dataset.armed !== "true") {
      button.dataset.armed = "true";
      button.textContent = "Confirm delete";
      return;
    }
    this.remove(threadId);
  }

  async change(threadId, changes) {
    try {
      await apiJson(this.cfg, "PATCH", `/threads/${encodeURIComponent(threadId)}`, changes);
    } catch (err) {
      this.actions.showError(describeError(err, this.cfg.endpoint).text);
    }
    this.loadThreads();
  }

  async remove(threadId) {
    try {
      await apiJson(this.cfg, "DELETE", `/threads/${encodeURIComponent(threadId)}`);
      this.actions.deleted(threadId);
    } catch (err) {
      this.actions.showError(describeError(err, this.cfg.endpoint).text);
    }
    this.loadThreads();
  }

  async loadApprovals() {
    const gen = ++this.generation;
    let page;
    try {
      page = await apiJson(this.cfg, "GET", `/approvals?limit=${PAGE}`);
    } catch (err) {
      if (gen === this.generation) this.inbox.replaceChildren(h("li", { class: "muted", text: describeError(err, this.cfg.endpoint).text }));
      return;
    }
    if (gen !== this.generation) return;
    this.inbox.replaceChildren();
    for (const approval of page?.approvals ?? []) this.inbox.append(this.approvalItem(approval));
    if (!this.inbox.children.length) this.inbox.append(h("li", { class: "muted", text: "Nothing waits for your approval." }));
  }

  approvalItem(approval) {
    const roles = Array.isArray(approval.requiredRoles) && approval.requiredRoles.length
      ? `role ${approval.requiredRoles.join(" or ")}`
      : "the thread's owner";
    const call = approval.toolCall?.args ? JSON.stringify(approval.toolCall.args) : "";
    return h(
      "li",
      { "data-testid": "approval-item", "data-thread-id": approval.threadId, "data-interrupt-id": approval.interruptId, class: "thread-item" },
      h("p", { class: "approval-message", text: approval.message || approval.reason || "Approval needed" }),
      call ? h("code", { class: "approval-call", text: call }) : null,
      h("small", { "data-testid": "approval-who", text: `Asked by ${approval.requestedBy || "unknown"} · answerable by ${roles}` }),
      h("small", { class: "muted", text: when(approval.createdAt) }),
      h("button", { type: "button", class: "btn small primary", text: "Open thread", onclick: () => this.actions.open(approval.threadId) }),
    );
  }
}
