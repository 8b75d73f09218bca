// Where the Node reference server of `make bench` keeps its threads, pending interrupts and
// refund ledger: in a Map (`memoryStore`, the reference issue 16 measured), or in SQLite
// through better-sqlite3 (`durableStore`, `reference-server.mjs --durable`): WAL with
// synchronous=FULL, committed where a careful Node developer commits to give the guarantees
// Handoff gives (issue 54):
//
// - run 1's history and its open interrupt are one commit, made before RUN_FINISHED is sent;
// - the answer is claimed by reading and clearing the open interrupt in one transaction (its
//   own commit, before the refund runs),
//   so a replayed or racing resume finds nothing to claim;
// - the refund is recorded under its idempotency key, with the resume's history, in one
//   commit before anything about it is streamed (a refund is a payment call in real life: it
//   cannot share the claim's transaction, so the claim commits first);
// - a chat turn appends its messages in one commit before RUN_FINISHED.
//
// Three commits per approval pair and one per chat turn; Handoff's engine makes six and one.
// Messages are appended rows (only those the stored history lacks), not the whole history
// rewritten, so a turn's cost does not grow with the thread.

import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** The issue-16 reference: nothing survives the process. */
export function memoryStore() {
  const threads = new Map(); // threadId -> { messages, state, pending }
  const ledger = new Map(); // orderId -> { refunds, refundedCents, idempotencyKeys }
  return {
    saveTurn(threadId, messages, state, pending) {
      threads.set(threadId, { messages, state, pending });
    },
    claim(threadId, interruptId) {
      const thread = threads.get(threadId);
      if (!thread?.pending || thread.pending.id !== interruptId) return undefined;
      const pending = thread.pending;
      thread.pending = undefined;
      return pending;
    },
    refund(threadId, order, idempotencyKey, newMessages, state) {
      const entry = ledger.get(order.orderId) ?? { refunds: 0, refundedCents: 0, idempotencyKeys: [] };
      entry.refunds += 1;
      entry.refundedCents += order.amountCents;
      entry.idempotencyKeys.push(idempotencyKey);
      ledger.set(order.orderId, entry);
      const thread = threads.get(threadId);
      thread.messages.push(...newMessages);
      thread.state = state;
    },
    ledger(orderId) {
      return ledger.get(orderId) ?? { refunds: 0, refundedCents: 0, idempotencyKeys: [] };
    },
  };
}

/** SQLite in `dir` (created if missing); reopening the same directory resumes where it was. */
export async function durableStore(dir) {
  // Loaded here so the in-memory reference runs without the native module.
  const { default: Database } = await import("better-sqlite3");
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, "reference.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec(`
    CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, state TEXT NOT NULL, pending_id TEXT, pending TEXT);
    CREATE TABLE IF NOT EXISTS messages (thread_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (thread_id, seq));
    CREATE TABLE IF NOT EXISTS refunds (idempotency_key TEXT PRIMARY KEY, order_id TEXT NOT NULL, amount_cents INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS refunds_by_order ON refunds (order_id);
  `);
  const q = {
    stored: db.prepare("SELECT count(*) AS n FROM messages WHERE thread_id = ?"),
    append: db.prepare("INSERT INTO messages (thread_id, seq, body) VALUES (?, ?, ?)"),
    upsert: db.prepare(
      `INSERT INTO threads (id, state, pending_id, pending) VALUES (@id, @state, @pendingId, @pending)
       ON CONFLICT (id) DO UPDATE SET state = @state, pending_id = @pendingId, pending = @pending`,
    ),
    pending: db.prepare("SELECT pending FROM threads WHERE id = ? AND pending_id = ?"),
    unset: db.prepare("UPDATE threads SET pending_id = NULL, pending = NULL WHERE id = ?"),
    record: db.prepare("INSERT OR IGNORE INTO refunds (idempotency_key, order_id, amount_cents) VALUES (?, ?, ?)"),
    setState: db.prepare("UPDATE threads SET state = ? WHERE id = ?"),
    ledger: db.prepare("SELECT idempotency_key AS key, amount_cents AS cents FROM refunds WHERE order_id = ? ORDER BY rowid"),
  };
  // Appends the messages past those already stored (clients send the whole history).
  const appendNew = (threadId, messages, from) => {
    const stored = from ?? q.stored.get(threadId).n;
    for (let seq = stored; seq < messages.length; seq++) q.append.run(threadId, seq, JSON.stringify(messages[seq]));
  };
  const saveTurn = db.transaction((threadId, messages, state, pending) => {
    appendNew(threadId, messages);
    q.upsert.run({ id: threadId, state: JSON.stringify(state), pendingId: pending?.id ?? null, pending: pending ? JSON.stringify(pending) : null });
  });
  const refund = db.transaction((threadId, order, idempotencyKey, newMessages, state) => {
    q.record.run(idempotencyKey, order.orderId, order.amountCents);
    const stored = q.stored.get(threadId).n;
    newMessages.forEach((m, i) => q.append.run(threadId, stored + i, JSON.stringify(m)));
    q.setState.run(JSON.stringify(state), threadId);
  });
  // Read and cleared in one transaction (an UPDATE's RETURNING gives the new, empty value).
  const claim = db.transaction((threadId, interruptId) => {
    const row = q.pending.get(threadId, interruptId);
    if (!row) return undefined;
    q.unset.run(threadId);
    return JSON.parse(row.pending);
  });
  return {
    saveTurn,
    claim,
    refund,
    ledger(orderId) {
      const rows = q.ledger.all(orderId);
      return {
        refunds: rows.length,
        refundedCents: rows.reduce((sum, r) => sum + r.cents, 0),
        idempotencyKeys: rows.map((r) => r.key),
      };
    },
  };
}
