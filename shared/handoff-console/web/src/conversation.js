// The conversation log: messages, tool calls, steps and run errors, keyed so that a
// streaming message is updated in place as TEXT_MESSAGE_CONTENT arrives.
import { h, contentText, prettyJsonText } from "./dom.js";

export class Conversation {
  constructor(ol) {
    this.ol = ol;
    this.nodes = new Map(); // key → li
    this.openSteps = new Map(); // stepName → li
    this.empty = h("li", { class: "placeholder", "aria-hidden": "true", text: "No messages yet. Ask for something below, e.g. “Refund order A1024”." });
    this.ol.append(this.empty);
  }

  clear() {
    this.ol.replaceChildren(this.empty);
    this.nodes.clear();
    this.openSteps.clear();
  }

  nearBottom() {
    const el = this.ol;
    return el.scrollHeight - el.scrollTop - el.clientHeight < 48;
  }

  scroll(wasNear) {
    if (wasNear) this.ol.scrollTop = this.ol.scrollHeight;
  }

  append(li) {
    this.empty.remove();
    this.ol.append(li);
  }

  /** Renders the agent's message list; existing nodes are updated, new ones appended. */
  render(messages) {
    const near = this.nearBottom();
    const results = new Map();
    const shownCalls = new Set();
    for (const m of messages) {
      if (m && m.role === "tool" && m.toolCallId) results.set(m.toolCallId, m);
      for (const call of Array.isArray(m?.toolCalls) ? m.toolCalls : []) shownCalls.add(call.id);
    }
    const seen = new Set();
    for (const m of messages) {
      if (!m || typeof m !== "object") continue;
      const role = m.role;
      if (role === "user" || role === "assistant" || role === "tool" || role === "system") {
        const text = contentText(m.content);
        const calls = Array.isArray(m.toolCalls) ? m.toolCalls : [];
        // A tool result is shown in its call's card; on its own only without the call.
        const inCard = role === "tool" && shownCalls.has(m.toolCallId);
        const showText = !inCard && (role !== "assistant" || text !== "" || calls.length === 0);
        if (showText && role !== "system") {
          const key = `m:${m.id}`;
          seen.add(key);
          this.upsertMessage(key, m, role, text);
        }
        for (const call of calls) {
          const key = `tc:${call.id}`;
          seen.add(key);
          this.upsertToolCall(key, call, results.get(call.id));
        }
      }
    }
    for (const [key, li] of this.nodes) {
      if (!seen.has(key)) {
        li.remove();
        this.nodes.delete(key);
      }
    }
    this.scroll(near);
  }

  upsertMessage(key, m, role, text) {
    let li = this.nodes.get(key);
    if (!li) {
      // The speaker label is drawn by CSS so the item's text is exactly the message.
      li = h(
        "li",
        { "data-testid": "message", "data-role": role, "data-message-id": m.id ?? "", class: `msg msg-${role}` },
        h(role === "tool" ? "pre" : "p", { class: "body" }),
      );
      this.nodes.set(key, li);
      this.append(li);
    }
    const body = li.lastChild;
    if (body.textContent !== text) body.textContent = text;
  }

  upsertToolCall(key, call, result) {
    let li = this.nodes.get(key);
    const name = call.function?.name ?? "tool";
    if (!li) {
      li = h(
        "li",
        { "data-testid": "tool-call", "data-tool-name": name, "data-tool-call-id": call.id, class: "tool" },
        h("p", { class: "tool-head" }, h("span", { class: "badge", text: "tool" }), " ", h("code", { class: "tool-name", text: name })),
        h("p", { class: "tool-label", text: "Arguments" }),
        h("pre", { "data-testid": "tool-args" }),
      );
      this.nodes.set(key, li);
      this.append(li);
    }
    if (li.dataset.toolName !== name) {
      li.dataset.toolName = name;
      li.querySelector(".tool-name").textContent = name;
    }
    const args = li.querySelector('[data-testid="tool-args"]');
    const argsText = prettyJsonText(call.function?.arguments ?? "");
    if (args.textContent !== argsText) args.textContent = argsText;
    if (result) {
      let pre = li.querySelector('[data-testid="tool-result"]');
      if (!pre) {
        li.append(h("p", { class: "tool-label", text: "Result" }));
        pre = h("pre", { "data-testid": "tool-result" });
        li.append(pre);
      }
      const t = prettyJsonText(contentText(result.content));
      if (pre.textContent !== t) pre.textContent = t;
    }
  }

  stepStarted(name) {
    const near = this.nearBottom();
    const li = h(
      "li",
      { "data-testid": "step", "data-step-name": name, "data-step-state": "started", class: "step" },
      h("span", { class: "step-dot", "aria-hidden": "true" }),
      h("span", { class: "step-text", text: `Step ${name}: started` }),
    );
    this.openSteps.set(name, li);
    this.append(li);
    this.scroll(near);
  }

  stepFinished(name) {
    let li = this.openSteps.get(name);
    if (!li) {
      this.stepStarted(name);
      li = this.openSteps.get(name);
    }
    li.dataset.stepState = "finished";
    li.querySelector(".step-text").textContent = `Step ${name}: finished`;
    this.openSteps.delete(name);
  }

  runError(code, message) {
    const near = this.nearBottom();
    const li = h(
      "li",
      { "data-testid": "run-error", "data-code": code || "", class: "run-error" },
      h("strong", { text: "Run failed" }),
      " ",
      h("span", { text: code ? `${code}: ${message}` : message }),
    );
    this.append(li);
    this.scroll(near);
  }
}
