// The right-hand column: approval cards, the agent state and the thread's A2A tasks.
import { h, pretty } from "./dom.js";
import { ApprovalCard } from "./card.js";

export class Approvals {
  /**
   * `onResume(resume)` gets the answers once every card has one. `hint(interrupt, path)`;
   * `args(interrupt)`: the arguments of the tool call it is about.
   */
  constructor(container, { onResume, hint, args }) {
    this.container = container;
    this.onResume = onResume;
    this.hint = hint;
    this.args = args;
    this.cards = new Map();
    this.busy = false;
  }

  get size() {
    return this.cards.size;
  }

  /** Shows one card per interrupt; cards already shown keep their edits. */
  render(interrupts) {
    const list = Array.isArray(interrupts) ? interrupts : [];
    const ids = new Set(list.map((i) => i.id));
    for (const [id, card] of this.cards) {
      if (!ids.has(id)) {
        card.destroy();
        this.cards.delete(id);
      }
    }
    let first = null;
    for (const it of list) {
      if (this.cards.has(it.id)) continue;
      const card = new ApprovalCard(it, {
        onAnswer: () => this.answered(),
        hint: (path) => this.hint(it, path),
        args: this.args ? this.args(it) : undefined,
      });
      card.setBusy(this.busy);
      this.cards.set(it.id, card);
      this.container.append(card.el);
      first = first || card;
    }
    this.container.hidden = this.cards.size === 0;
    if (first) first.focus();
  }

  answered() {
    const cards = [...this.cards.values()];
    if (cards.some((c) => !c.answer)) {
      const next = cards.find((c) => !c.answer);
      if (next) next.focus();
      return;
    }
    this.onResume(cards.map((c) => c.answer));
  }

  setBusy(busy) {
    this.busy = busy;
    for (const c of this.cards.values()) c.setBusy(busy);
  }

  /** A refused resume: every card shows the error and can be answered again. */
  refused(text) {
    for (const c of this.cards.values()) {
      c.reopen();
      c.setError(text);
    }
  }

  reopenAll() {
    for (const c of this.cards.values()) c.reopen();
  }

  clearErrors() {
    for (const c of this.cards.values()) c.setError(null);
  }

  clear() {
    this.render([]);
  }
}

export class StatePanel {
  constructor(pre) {
    this.pre = pre;
    this.set({});
  }

  set(state) {
    const text = pretty(state === undefined || state === null ? {} : state);
    if (this.pre.textContent !== text) this.pre.textContent = text;
  }
}

const LIVE = /WORKING|SUBMITTED/i;

export class TasksPanel {
  constructor(list) {
    this.list = list;
    this.placeholder = h("li", { class: "placeholder", "data-testid": "a2a-empty", text: "No A2A tasks on this thread." });
    this.set([]);
  }

  /** Renders `a2aTasks`; returns true when some task is still working. */
  set(tasks) {
    const items = [];
    let live = false;
    for (const entry of Array.isArray(tasks) ? tasks : []) {
      const task = entry && typeof entry === "object" ? entry.task || entry : null;
      if (!task || task.id === undefined) continue;
      const state = String(task.status?.state ?? "TASK_STATE_UNSPECIFIED");
      if (LIVE.test(state)) live = true;
      const nice = state.replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, " ");
      const detail = task.status?.message?.parts?.map?.((p) => p?.text || "").join(" ").trim();
      items.push(
        h(
          "li",
          { "data-testid": "a2a-task", "data-task-id": String(task.id), "data-state": state, class: "task" },
          h("code", { class: "task-id", text: String(task.id) }),
          " ",
          h("span", { class: `task-state state-${nice.replace(/ /g, "-")}`, text: state }),
          detail ? h("p", { class: "task-detail", text: detail }) : null,
        ),
      );
    }
    this.list.replaceChildren(...(items.length ? items : [this.placeholder]));
    return live;
  }
}
