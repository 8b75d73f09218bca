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
//! - **KV holds large values only, write-once, by content hash.** A put above
//!   the inline limit (32 KiB by default) first writes the bytes to KV under
//!   `blob/{sha256}/{expiry}`, then commits a reference to the object. KV is
//!   never read-modified-written: a key's bytes never change, so KV's eventual
//!   consistency can only delay a read, never return wrong bytes; readers check
//!   the hash and wait a bounded time for a blob written in another location,
//!   then fail with the retryable [`StoreError::Unavailable`](handoff_core::StoreError).
//!   Without a KV binding, values up to ~1.9 MB stay inline and larger ones are
//!   [`TooLarge`](handoff_core::StoreError).
//! - **Expiry.** An expired row reads as absent and satisfies an "absent"
//!   condition at once; an alarm deletes it physically a minute later. Blobs
//!   carry a KV expiration an hour past their row's.
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
// The `#[durable_object]` expansion adds undocumented wasm-bindgen glue.
#[allow(missing_docs)]
mod object;
pub mod protocol;

pub use client::{DEFAULT_INLINE_LIMIT, DurableStore};
pub use object::PartitionObject;
