//! Handoff's Cloudflare store: [`handoff_core::Store`] where every partition
//! (a thread, a ledger account) is owned by one Durable Object, and large
//! values are offloaded to KV.
//!
//! # Why not KV alone
//!
//! KV has no compare-and-set, is eventually consistent between locations (a
//! read elsewhere may see a stale or cached-absent value for 60 s or more) and
//! takes about one write per second per key. Pending interrupts, the run lease,
//! resume (idempotency) and effect records need one strongly consistent writer:
//! a Durable Object is exactly that.
//!
//! # Design
//!
//! - **One object per partition**, addressed by name ([`DurableStore`] calls
//!   `get_by_name(partition)`). Every `get`, `commit` and `list` of a partition
//!   is one request to its [`PartitionObject`].
//! - **The object is the authority.** Items are rows of a SQLite table in the
//!   object's storage (`key`, `version`, `inline` bytes or a `blob` reference,
//!   `expires_at`). A commit reads the rows it conditions on, checks every
//!   condition and writes, with synchronous SQL and no `await` in between: no
//!   other request can interleave and the writes commit together or not at
//!   all. Reads come from the same object, so they are strongly consistent.
//! - **KV holds large values only, each written once under its own key.** A
//!   put above the inline limit (32 KiB by default) first writes the bytes to
//!   KV under `blob/p/{scope}/{id}` (`scope`: 128 bits of the partition name's
//!   SHA-256; `id`: 128 random bits), then commits a reference (key, SHA-256,
//!   length) to the object. KV is never read-modified-written: a key's bytes
//!   never change, so KV's eventual consistency can only delay a read, never
//!   return wrong bytes; readers check the hash and wait a bounded time for a
//!   blob written in another location, then fail with the retryable
//!   [`StoreError::Unavailable`](handoff_core::StoreError). Without a KV
//!   binding, values up to ~1.9 MB stay inline and larger ones are
//!   [`TooLarge`](handoff_core::StoreError).
//! - **Expiry.** An expired row reads as absent and satisfies an "absent"
//!   condition at once; an alarm deletes it physically a minute later. Blobs
//!   carry a KV expiration an hour past their row's, a backstop only: the
//!   object deletes them as soon as nothing references them.
//!
//! - **Listings** ([`Store::list_index`](handoff_core::Store::list_index), one owner's
//!   threads) are kept by one object per scope, of the same class, fed from an outbox the
//!   partition's commit writes in its own transaction: see [`listing`]. The objects reach
//!   each other through the class's binding (`PARTITIONS`, or the one named by
//!   `HANDOFF_PARTITIONS_BINDING`).
//!
//! # Blob lifecycle
//!
//! A blob is referenced by at most one row: the one its commit wrote. (Blobs
//! used to be content-addressed, `blob/{sha256}/{expiry}`; such a key may be
//! shared by rows of several partitions, so whoever deleted it could pull the
//! bytes from under another row, or from under a writer that had just put the
//! same bytes and was about to commit. Random per-put keys rule both out.)
//! The partition's object, the one writer that knows when a reference ends,
//! deletes the blob from KV (the binding `BLOBS`, or the one named by
//! `HANDOFF_BLOBS_BINDING`) once it is unreferenced:
//!
//! 1. **Written**: the Worker puts the blob, then sends the commit.
//! 2. **Released**, recorded in the object's `blob_gc` table with a due time
//!    (now + `HANDOFF_BLOB_GC_GRACE_MS`, default 60 s) when
//!    - a commit replaces or deletes the row referencing it (recorded in the
//!      same transaction as the commit itself),
//!    - the alarm purges the expired row referencing it (same transaction as
//!      the purge),
//!    - its commit is refused on a condition (the object records the batch's
//!      blobs before answering 409), or
//!    - its commit failed otherwise, or its put failed: the Worker sends the
//!      object a `release` naming the blobs it wrote. The commit may have
//!      landed after all (a lost answer), so the object records only blobs no
//!      row references.
//! 3. **Deleted** by the object's alarm once due, off the request path: a blob a
//!    row references again (a commit that landed after its release) is dropped
//!    from the table instead; a failed KV delete is retried with backoff (2^n s,
//!    at most an hour, 20 attempts). The grace lets a reader that got the old
//!    row just before it was replaced still read its bytes, and covers a
//!    commit whose answer was lost but which is still on its way to the object
//!    when the Worker releases its blobs (it would have to arrive a whole
//!    grace later to reference a deleted blob).
//!
//! What is left to KV's own expiration: the blobs of a Worker that died
//! between its put and its commit, or whose release could not reach the object
//! either, and content-addressed blobs from before; a blob whose row expires past what
//! KV's expiration can say (January 2038, e.g. an audit entry) has no such backstop.
//! Each collected blob costs
//! one KV delete (billed like a write; a daily quota on the free plan). With the engine's small thread head and append-only pages, a
//! turn writes no blob at all under the default inline limit, whatever the
//! thread's length (measured in workerd at 10, 100 and 1,000 messages by
//! `tests/node/worker.test.mjs`); a run that adds more than 32 KiB of text
//! writes two (its history page and its run log; three when it is a resumed
//! run, whose resume record copies the run log).
//!
//! # Guarantees
//!
//! Those of [`handoff_core::Store`]: consistent multi-key reads, all-or-nothing
//! conditional batches, predictable versions; checked by the store
//! conformance suite running inside workerd (see `functions/agent-worker`).
//!
//! # Use
//!
//! ```no_run
//! # fn demo(env: worker::Env) -> worker::Result<()> {
//! use handoff_store_cloudflare::DurableStore;
//! // wrangler.toml binds the PartitionObject class as PARTITIONS and a KV namespace as BLOBS.
//! let store = DurableStore::from_env(&env, "PARTITIONS", Some("BLOBS"))?;
//! # let _ = store; Ok(())
//! # }
//! ```
//!
//! The Worker must export [`PartitionObject`] (re-export it from the crate
//! that defines the fetch handler) and declare it in a migration under
//! `new_sqlite_classes`.

mod blob;
mod client;
pub mod listing;
// The `#[durable_object]` expansion adds undocumented wasm-bindgen glue.
#[allow(missing_docs)]
mod object;
pub mod protocol;

pub use blob::BlobStats;
pub use client::{DEFAULT_INLINE_LIMIT, DurableStore};
pub use object::PartitionObject;
