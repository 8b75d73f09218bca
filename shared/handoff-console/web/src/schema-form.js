// A form generated from an interrupt's responseSchema (JSON Schema), plus reading the
// payload back and pointing validation errors at the fields they concern.
import { h, uid, pretty } from "./dom.js";

function kindOf(schema) {
  if (!schema || typeof schema !== "object") return "json";
  if ("const" in schema) return "const";
  if (Array.isArray(schema.enum)) return "enum";
  let t = schema.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null") ?? t[0];
  if (t === "boolean") return "boolean";
  if (t === "integer" || t === "number") return t;
  if (t === "string") return "string";
  if (t === "object" || (t === undefined && schema.properties && typeof schema.properties === "object")) {
    if (schema.oneOf || schema.anyOf || schema.allOf || schema.if) return "json";
    return "object";
  }
  return "json";
}

export function pointer(path) {
  return "#" + path.map((k) => "/" + String(k).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

function decodePointer(p) {
  let s = String(p || "#");
  try {
    s = decodeURIComponent(s);
  } catch {
    /* keep as is */
  }
  return s;
}

/** True when the schema has a top-level boolean `approved` (handled by Approve / Deny). */
export function hasApprovedFlag(schema) {
  const p = schema && schema.properties && schema.properties.approved;
  return kindOf(schema) === "object" && !!p && kindOf(p) === "boolean";
}

/**
 * Builds the form. `hint(path)` may return an example value shown as placeholder.
 * Returns {el, read, showErrors, clear}.
 */
export function buildSchemaForm(schema, { hint } = {}) {
  const fields = new Map(); // pointer → leaf or object node
  const skipApproved = hasApprovedFlag(schema);

  function leaf(s, path, key, required) {
    const kind = kindOf(s);
    const id = uid("f");
    const errId = `${id}-err`;
    const label = (s && typeof s.title === "string" && s.title) || key;
    const described = [];
    const hintEl = s && typeof s.description === "string" && s.description ? h("small", { id: `${id}-hint`, class: "hint", text: s.description }) : null;
    if (hintEl) described.push(hintEl.id);
    const errEl = h("p", { id: errId, class: "field-error", hidden: true });
    let input;
    if (kind === "boolean") {
      input = h("input", { type: "checkbox", id, name: key });
      if (s.default === true) input.checked = true;
    } else if (kind === "enum") {
      input = h("select", { id, name: key });
      input.append(h("option", { value: "", text: required ? "Choose…" : "—" }));
      s.enum.forEach((v, i) => input.append(h("option", { value: String(i), text: typeof v === "string" ? v : pretty(v) })));
    } else if (kind === "const") {
      input = h("input", { type: "text", id, name: key, readOnly: true, class: "const" });
      input.value = typeof s.const === "string" ? s.const : JSON.stringify(s.const);
    } else if (kind === "integer" || kind === "number") {
      input = h("input", { type: "number", id, name: key, inputMode: kind === "integer" ? "numeric" : "decimal" });
      if (typeof s.minimum === "number") input.min = String(s.minimum);
      if (typeof s.maximum === "number") input.max = String(s.maximum);
      if (kind === "integer") input.step = "1";
      else input.step = "any";
    } else if (kind === "string") {
      input = h("input", { type: "text", id, name: key });
      if (typeof s.minLength === "number") input.minLength = s.minLength;
      if (typeof s.maxLength === "number") input.maxLength = s.maxLength;
      if (typeof s.pattern === "string") input.setAttribute("pattern", s.pattern);
      if (typeof s.format === "string") input.dataset.format = s.format;
    } else {
      input = h("textarea", { id, name: key, rows: 4, class: "json", spellcheck: false });
      input.placeholder = "JSON";
      if (s && s.default !== undefined) input.value = pretty(s.default);
    }
    if (required) input.setAttribute("aria-required", "true");
    const ex = hint ? hint(path) : undefined;
    if (ex !== undefined && "placeholder" in input && kind !== "const" && kind !== "boolean") {
      input.placeholder = typeof ex === "string" ? ex : JSON.stringify(ex);
    }
    input.setAttribute("aria-describedby", [...described, errId].join(" "));
    const labelEl = h("label", { for: id, text: label });
    const wrap = h("div", { class: `field field-${kind}` }, kind === "boolean" ? [input, labelEl] : [labelEl, input], hintEl, errEl);
    const node = {
      label,
      wrap,
      input,
      read() {
        if (kind === "const") return { present: true, filled: false, value: s.const };
        if (kind === "boolean") return { present: true, filled: input.checked, value: input.checked };
        if (kind === "enum") {
          if (input.value === "") return { present: false, filled: false };
          return { present: true, filled: true, value: s.enum[Number(input.value)] };
        }
        const raw = input.value;
        if (kind === "integer" || kind === "number") {
          if (raw.trim() === "") {
            // A number input reports "" for text it cannot parse: say so instead of omitting.
            if (input.validity && input.validity.badInput) return { present: true, filled: true, value: raw, bad: "Enter a number." };
            return { present: false, filled: false };
          }
          const n = Number(raw);
          return { present: true, filled: true, value: Number.isFinite(n) ? n : raw };
        }
        if (kind === "string") {
          if (raw === "") return { present: required, filled: false, value: "" };
          return { present: true, filled: true, value: raw };
        }
        if (raw.trim() === "") return { present: false, filled: false };
        try {
          return { present: true, filled: true, value: JSON.parse(raw) };
        } catch {
          return { present: true, filled: true, value: raw, bad: "Not valid JSON." };
        }
      },
      setError(msg) {
        if (msg) {
          input.setAttribute("aria-invalid", "true");
          errEl.textContent = msg;
          errEl.hidden = false;
        } else {
          input.removeAttribute("aria-invalid");
          errEl.textContent = "";
          errEl.hidden = true;
        }
      },
    };
    fields.set(pointer(path), node);
    return node;
  }

  function object(s, path, key, required, top) {
    const props = s.properties && typeof s.properties === "object" ? s.properties : {};
    const req = new Set(Array.isArray(s.required) ? s.required : []);
    const children = [];
    for (const [k, sub] of Object.entries(props)) {
      if (top && skipApproved && k === "approved") continue;
      const p = [...path, k];
      children.push([k, kindOf(sub) === "object" ? object(sub, p, k, req.has(k), false) : leaf(sub, p, k, req.has(k))]);
    }
    let wrap;
    if (top) {
      wrap = h("div", { class: "schema-form" }, children.map(([, c]) => c.wrap));
    } else {
      const legend = (typeof s.title === "string" && s.title) || key;
      wrap = h(
        "fieldset",
        { class: "field-object" },
        h("legend", { text: legend }),
        typeof s.description === "string" && s.description ? h("small", { class: "hint", text: s.description }) : null,
        children.map(([, c]) => c.wrap),
      );
    }
    const node = {
      label: (typeof s.title === "string" && s.title) || key || "form",
      wrap,
      read() {
        const value = {};
        const bad = [];
        let filled = false;
        for (const [k, c] of children) {
          const r = c.read();
          if (r.bad) bad.push([c, r.bad]);
          if (r.badFields) bad.push(...r.badFields);
          if (r.filled) filled = true;
          if (r.present) value[k] = r.value;
        }
        return { present: top || required || filled, filled, value, badFields: bad };
      },
      setError() {},
    };
    fields.set(pointer(path), node);
    return node;
  }

  let root;
  if (kindOf(schema) === "object") {
    root = object(schema, [], "", true, true);
  } else {
    const l = leaf(schema || {}, [], "value", true);
    root = { wrap: h("div", { class: "schema-form" }, l.wrap), read: () => ({ ...l.read(), badFields: [] }), single: l };
  }

  return {
    el: root.wrap,
    isEmpty: fields.size <= 1 && !root.single,
    /** {value, problems: [[field, message]]} — problems are input mistakes found before validation. */
    read() {
      const r = root.read();
      const problems = [...(r.badFields || [])];
      if (root.single && r.bad) problems.push([root.single, r.bad]);
      return { value: root.single ? (r.present ? r.value : undefined) : r.value, problems };
    },
    clear() {
      for (const f of fields.values()) f.setError(null);
    },
    /** Points validator errors at fields; returns the summary lines. */
    showErrors(errors) {
      const byField = new Map();
      const loose = [];
      for (const e of errors) {
        let loc = decodePointer(e.instanceLocation);
        if (e.keyword === "required") {
          const m = /property "(.*)"/.exec(e.error || "");
          if (m) loc = `${loc === "#" ? "#" : loc}/${m[1]}`;
        }
        const f = fields.get(loc);
        const aggregate = ["properties", "items", "prefixItems", "additionalProperties", "allOf", "$ref", "unevaluatedProperties"].includes(e.keyword);
        if (aggregate) continue;
        const msg = e.keyword === "required" ? "This field is required." : e.error;
        if (f && f.input) {
          if (!byField.has(f)) byField.set(f, msg);
        } else {
          loose.push(msg);
        }
      }
      const lines = [];
      for (const [f, msg] of byField) {
        f.setError(msg);
        lines.push(`${f.label}: ${msg}`);
      }
      return [...lines, ...loose];
    },
    focusFirstInvalid() {
      const bad = root.wrap.querySelector('[aria-invalid="true"]');
      if (bad) bad.focus();
    },
  };
}
