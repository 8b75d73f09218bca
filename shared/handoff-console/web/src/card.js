// One approval card per pending interrupt: message, countdown, generated form,
// Approve / Deny / Cancel, and an inline error. Answers are validated before they leave.
import { Validator } from "@cfworker/json-schema";
import { h, uid } from "./dom.js";
import { buildSchemaForm, hasApprovedFlag } from "./schema-form.js";
import { approvalPolicy, withApprovalBounds } from "./approval-bounds.js";

export function formatCountdown(expiresAt, now = Date.now()) {
  const t = Date.parse(expiresAt);
  if (!Number.isFinite(t)) return null;
  const left = Math.ceil((t - now) / 1000);
  if (left <= 0) return "Expired";
  const m = Math.floor(left / 60);
  const s = String(left % 60).padStart(2, "0");
  return `Expires in ${m}:${s}`;
}

export class ApprovalCard {
  /**
   * `onAnswer(card, answer)` receives {interruptId, status, payload?}; `args` are the
   * arguments of the tool call the interrupt is about (bounds from its approval policy).
   */
  constructor(interrupt, { onAnswer, hint, args }) {
    this.interrupt = interrupt;
    this.onAnswer = onAnswer;
    this.answer = null;
    const declared = interrupt.responseSchema && typeof interrupt.responseSchema === "object" ? interrupt.responseSchema : null;
    const schema = declared ? withApprovalBounds(declared, approvalPolicy(interrupt), args) : null;
    this.schema = schema;
    this.approvedFlag = schema ? hasApprovedFlag(schema) : false;
    this.validator = schema ? new Validator(schema, "2020-12", false) : null;
    this.form = schema ? buildSchemaForm(schema, { hint }) : null;

    const headingId = uid("card-h");
    this.heading = h("h2", { id: headingId, tabindex: "-1", text: "Approval needed" });
    this.countdown = h("p", { "data-testid": "countdown", class: "countdown", hidden: true });
    this.error = h("p", { role: "alert", "data-testid": "card-error", class: "card-error", hidden: true });
    this.answered = h("p", { class: "answered", hidden: true });
    this.approveBtn = h("button", { type: "button", class: "btn primary", text: "Approve", onclick: () => this.submit(true) });
    this.denyBtn = this.approvedFlag ? h("button", { type: "button", class: "btn danger", text: "Deny", onclick: () => this.submit(false) }) : null;
    this.cancelBtn = h("button", { type: "button", class: "btn", text: "Cancel", onclick: () => this.cancel() });
    const meta = [];
    if (interrupt.reason) meta.push(h("span", { class: "chip", text: String(interrupt.reason) }));
    if (interrupt.toolCallId) meta.push(h("code", { class: "chip mono", text: String(interrupt.toolCallId) }));

    const formEl = h(
      "form",
      { novalidate: true, class: "card-form", onsubmit: (e) => (e.preventDefault(), this.submit(true)) },
      this.form && !this.form.isEmpty ? this.form.el : null,
      h("div", { class: "card-actions" }, this.approveBtn, this.denyBtn, this.cancelBtn),
    );
    this.el = h(
      "section",
      { "data-testid": "approval-card", "data-interrupt-id": interrupt.id, "aria-labelledby": headingId, class: "card" },
      h("div", { class: "card-head" }, this.heading, this.countdown),
      h("p", { "data-testid": "card-message", class: "card-message", text: interrupt.message ? String(interrupt.message) : "The agent is waiting for your decision." }),
      meta.length ? h("p", { class: "card-meta" }, meta) : null,
      formEl,
      this.answered,
      this.error,
    );
    this.tick();
    if (interrupt.expiresAt) this.timer = setInterval(() => this.tick(), 1000);
  }

  tick() {
    const text = this.interrupt.expiresAt ? formatCountdown(this.interrupt.expiresAt) : null;
    if (text === null) {
      this.countdown.hidden = true;
      return;
    }
    this.countdown.hidden = false;
    if (this.countdown.textContent !== text) this.countdown.textContent = text;
    this.countdown.classList.toggle("expired", text === "Expired");
  }

  setError(text) {
    this.error.textContent = text || "";
    this.error.hidden = !text;
  }

  setBusy(busy) {
    for (const b of [this.approveBtn, this.denyBtn, this.cancelBtn]) if (b) b.disabled = busy;
  }

  payload(approve) {
    const { value, problems } = this.form.read();
    if (this.approvedFlag) {
      if (!approve) return { ok: true, value: { approved: false } };
      return { ok: problems.length === 0, problems, value: { ...(value || {}), approved: true } };
    }
    return { ok: problems.length === 0, problems, value };
  }

  submit(approve) {
    this.setError(null);
    if (this.form) this.form.clear();
    let value;
    if (!this.form) {
      value = this.approvedFlag ? { approved: approve } : {};
    } else {
      const r = this.payload(approve);
      if (!r.ok) {
        const lines = r.problems.map(([f, msg]) => (f.setError(msg), `${f.label}: ${msg}`));
        this.setError(`Fix the form before sending: ${lines.join("; ")}`);
        this.form.focusFirstInvalid();
        return;
      }
      value = r.value;
    }
    if (this.validator) {
      const result = this.validator.validate(value);
      if (!result.valid) {
        const lines = this.form ? this.form.showErrors(result.errors) : result.errors.map((e) => e.error);
        this.setError(`Fix the form before sending: ${lines.join("; ") || "the answer does not match the schema."}`);
        if (this.form) this.form.focusFirstInvalid();
        return;
      }
    }
    this.record({ interruptId: this.interrupt.id, status: "resolved", payload: value }, approve ? (this.approvedFlag ? "Approved" : "Submitted") : "Denied");
  }

  cancel() {
    this.setError(null);
    if (this.form) this.form.clear();
    this.record({ interruptId: this.interrupt.id, status: "cancelled" }, "Cancelled");
  }

  record(answer, label) {
    this.answer = answer;
    this.el.dataset.answered = "true";
    this.answered.textContent = `Answered: ${label}`;
    this.answered.hidden = false;
    this.onAnswer(this, answer);
  }

  /** Back to unanswered (after the resume was refused). */
  reopen() {
    this.answer = null;
    delete this.el.dataset.answered;
    this.answered.hidden = true;
  }

  focus() {
    this.heading.focus({ preventScroll: false });
  }

  destroy() {
    clearInterval(this.timer);
    this.el.remove();
  }
}
