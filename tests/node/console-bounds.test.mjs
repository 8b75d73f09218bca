// The console mirrors an interrupt's approval policy (metadata `handoff.approval`) in the
// schema its approval form is built and checked from: the page says what the server would
// refuse before anything is sent. Pure functions; the Chromium flows are in console.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { approvalPolicy, withApprovalBounds } from "../../shared/handoff-console/web/src/approval-bounds.js";

const typed = {
  type: "object",
  properties: {
    approved: { type: "boolean" },
    editedArgs: {
      type: "object",
      properties: {
        orderId: { type: "string" },
        amountCents: { type: "integer", minimum: 1 },
        currency: { type: "string" },
        note: { type: "string" },
      },
    },
  },
};
const args = { orderId: "A1", amountCents: 4200, currency: "USD", note: "late" };
const policy = { roles: ["approver"], notRequester: true, edits: { orderId: "fixed", amountCents: "atMostOriginal", note: "any" } };

test("edit rules become bounds around the proposed arguments; unlisted arguments are fixed", () => {
  const interrupt = { id: "i", reason: "tool_call", metadata: { "handoff.approval": policy } };
  const bounded = withApprovalBounds(typed, approvalPolicy(interrupt), args);
  const p = bounded.properties.editedArgs.properties;
  assert.deepEqual(p.orderId, { type: "string", const: "A1" });
  assert.deepEqual(p.amountCents, { type: "integer", minimum: 1, maximum: 4200 });
  assert.deepEqual(p.currency, { type: "string", const: "USD" }, "no rule: fixed");
  assert.deepEqual(p.note, { type: "string" }, "any: as the schema says");
  assert.deepEqual(bounded.properties.approved, { type: "boolean" });
  assert.equal(typed.properties.editedArgs.properties.amountCents.maximum, undefined, "the declared schema is not changed");
});

test("at least the original, and a schema bound tighter than the policy's stays", () => {
  const schema = structuredClone(typed);
  schema.properties.editedArgs.properties.amountCents.maximum = 100;
  const bounded = withApprovalBounds(schema, { edits: { amountCents: "atMostOriginal", orderId: "atLeastOriginal" } }, args);
  assert.equal(bounded.properties.editedArgs.properties.amountCents.maximum, 100);
  // Not a number: the page cannot bound it, the server still checks it.
  assert.deepEqual(bounded.properties.editedArgs.properties.orderId, { type: "string" });
  const up = withApprovalBounds(typed, { edits: { amountCents: "atLeastOriginal" } }, args);
  assert.equal(up.properties.editedArgs.properties.amountCents.minimum, 4200);
});

test("without a policy, the call's arguments or editedArgs the schema is used as declared", () => {
  assert.equal(withApprovalBounds(typed, null, args), typed);
  assert.equal(withApprovalBounds(typed, policy, undefined), typed);
  const plain = { type: "object", properties: { approved: { type: "boolean" } } };
  assert.equal(withApprovalBounds(plain, policy, args), plain);
  assert.equal(approvalPolicy({ id: "i", metadata: { "handoff.approval": [1] } }), null);
  assert.equal(approvalPolicy({ id: "i" }), null);
});
