// The approval policy's edit rules (interrupt metadata `handoff.approval`) as JSON Schema,
// so the form and the in-page check know what the server will refuse. The engine enforces
// the policy on every route; the page only mirrors it to say so before anything is sent.
// An agent's responseSchema may type an answer for every order alike; the bounds that
// depend on the proposed call (this order, at most this amount) come from the policy.

const POLICY = "handoff.approval";

/** The interrupt's policy, or null. */
export function approvalPolicy(interrupt) {
  const p = interrupt && interrupt.metadata && interrupt.metadata[POLICY];
  return p && typeof p === "object" && !Array.isArray(p) ? p : null;
}

function boundFor(rule, original, sub) {
  if (original === undefined) return sub;
  switch (rule) {
    case "any":
      return sub;
    case "atMostOriginal":
      return typeof original === "number" ? { ...sub, maximum: Math.min(original, sub.maximum ?? Infinity) } : sub;
    case "atLeastOriginal":
      return typeof original === "number" ? { ...sub, minimum: Math.max(original, sub.minimum ?? -Infinity) } : sub;
    default:
      // "fixed", an unlisted argument, or a rule this page does not know: keep it as proposed.
      return { ...sub, const: original };
  }
}

/**
 * `schema` with `editedArgs`' properties bounded by `policy`'s edit rules around the
 * proposed `args` (the tool call's arguments). Unchanged when any of them is missing.
 */
export function withApprovalBounds(schema, policy, args) {
  const edited = schema && schema.properties && schema.properties.editedArgs;
  if (!policy || !args || typeof args !== "object" || !edited || typeof edited.properties !== "object" || !edited.properties) return schema;
  const edits = policy.edits && typeof policy.edits === "object" ? policy.edits : {};
  const properties = {};
  for (const [key, sub] of Object.entries(edited.properties)) {
    properties[key] = sub && typeof sub === "object" ? boundFor(edits[key], args[key], sub) : sub;
  }
  return { ...schema, properties: { ...schema.properties, editedArgs: { ...edited, properties } } };
}
