// The bell: how many approvals wait for the signed-in user (`GET /approvals/waiting`, the
// server's own rule: the policy's roles, not the requester, the tenant), with their list;
// an entry opens its thread with its approval card. It asks again every POLL_MS while the
// page is shown, when the page is shown again, and after each run this page makes; the
// server takes an interrupt off as soon as it is answered, by whatever route.
import { h } from "./dom.js";
import { ApiError, apiJson } from "./agent.js";

export const POLL_MS = 10_000;

const SVG = "http://www.w3.org/2000/svg";

/** A bell drawn in the text's colour (no emoji font needed). */
function bellIcon() {
  const svg = document.createElementNS(SVG, "svg");
  for (const [k, v] of Object.entries({ viewBox: "0 0 24 24", width: "18", height: "18", "aria-hidden": "true", class: "bell-icon" })) svg.setAttribute(k, v);
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M12 2a6 6 0 0 0-6 6v4.5L4 16v1h16v-1l-2-3.5V8a6 6 0 0 0-6-6Zm-2.5 17a2.5 2.5 0 0 0 5 0Z");
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

function when(ms) {
  return Number.isFinite(ms) ? new Date(ms).toLocaleString() : "";
}

export class Bell {
  /** `cfg` is the live connection ({endpoint, token}); `open(threadId)` opens a thread. */
  constructor(root, cfg, { open }) {
    this.root = root;
    this.cfg = cfg;
    this.open = open;
    this.timer = null;
    this.generation = 0;
    this.count = h("span", { class: "bell-count", "data-testid": "bell-count", text: "0" });
    this.button = h(
      "button",
      {
        type: "button",
        class: "btn bell",
        "data-testid": "bell",
        "aria-expanded": "false",
        "aria-controls": "bell-panel",
        hidden: true,
        onclick: () => this.toggle(),
      },
      bellIcon(),
      this.count,
    );
    this.list = h("ul", { class: "thread-list", "aria-label": "Approvals waiting for you" });
    this.panel = h(
      "div",
      { id: "bell-panel", class: "bell-panel", "data-testid": "bell-panel", hidden: true },
      h("p", { class: "bell-title", text: "Waiting for your approval" }),
      this.list,
    );
    root.append(this.button, this.panel);
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden) this.refresh();
    });
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !this.panel.hidden) {
        this.close();
        this.button.focus();
      }
    });
    document.addEventListener("click", (e) => {
      if (!this.panel.hidden && !root.contains(e.target)) this.close();
    });
  }

  /** Asks the server now, then every POLL_MS while the page is shown. */
  async refresh() {
    const gen = ++this.generation;
    clearTimeout(this.timer);
    if (document.hidden) return; // asked again when the page is shown
    let body;
    try {
      body = await apiJson(this.cfg, "GET", "/approvals/waiting");
    } catch (err) {
      // Not signed in (or not allowed): nothing waits for this page. Otherwise the last
      // answer stands until the next one.
      body = err instanceof ApiError && (err.status === 401 || err.status === 403) ? null : undefined;
    }
    if (gen !== this.generation) return;
    if (body !== undefined) this.show(body);
    this.timer = setTimeout(() => this.refresh(), POLL_MS);
  }

  show(body) {
    const items = Array.isArray(body?.approvals) ? body.approvals : [];
    const count = Number.isInteger(body?.count) ? body.count : items.length;
    const label = body?.more || count > 99 ? "99+" : String(count);
    this.count.textContent = label;
    this.button.dataset.count = String(count);
    this.button.setAttribute("aria-label", `Approvals waiting for you: ${label}`);
    this.button.hidden = count === 0;
    this.list.replaceChildren(...items.map((item) => this.item(item)));
    if (!count) this.close();
  }

  item(approval) {
    const who = approval.requestedBy ? `Asked by ${approval.requestedBy}` : "Asked";
    const at = when(approval.requestedAt);
    return h(
      "li",
      { "data-testid": "bell-item", "data-thread-id": approval.threadId, "data-interrupt-id": approval.interruptId, class: "thread-item" },
      h("p", { class: "approval-message", text: approval.message || "Approval needed" }),
      h("small", { class: "muted", text: at ? `${who} · ${at}` : who }),
      h("button", {
        type: "button",
        class: "btn small primary",
        text: "Open",
        "aria-label": `Open thread ${approval.threadId}`,
        onclick: () => {
          this.close();
          this.open(approval.threadId);
        },
      }),
    );
  }

  toggle() {
    if (this.panel.hidden) {
      this.panel.hidden = false;
      this.button.setAttribute("aria-expanded", "true");
      this.list.querySelector("button")?.focus();
    } else {
      this.close();
    }
  }

  close() {
    this.panel.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
  }
}
