//! Handoff's DynamoDB store: [`handoff_core::Store`] on one DynamoDB table.
//!
//! [`DynamoStore`] keeps every partition of the engine (one per thread, one per demo ledger
//! account) in a single table: strongly consistent reads, every commit one all-or-nothing
//! `TransactWriteItems` (or one single-item call when the batch has one write), and values of
//! any size (large ones are compressed and split into chunk items transparently).
//!
//! ```no_run
//! use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
//! use handoff_core::{Condition, Store, StoreError, Write};
//! use handoff_store_dynamodb::DynamoStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), StoreError> {
//! // In Lambda: a client from `handoff::lambda::store_from_env`, or `aws-config` elsewhere.
//! // Here: DynamoDB Local / moto_server on port 8000.
//! let config = aws_sdk_dynamodb::Config::builder()
//!     .behavior_version(BehaviorVersion::latest())
//!     .region(Region::new("us-east-1"))
//!     .credentials_provider(Credentials::new("test", "test", None, None, "static"))
//!     .endpoint_url("http://127.0.0.1:8000")
//!     .build();
//! let client = aws_sdk_dynamodb::Client::from_conf(config);
//! DynamoStore::create_table(&client, "handoff").await?; // once; idempotent
//! let store = DynamoStore::new(client, "handoff");
//!
//! let now_ms = 1_700_000_000_000;
//! let create = Write::put("thread", Condition::Absent, br#"{"status":"idle"}"#.to_vec(), None);
//! store.commit("thread#t1", vec![create], now_ms).await?;
//! let thread = store.get("thread#t1", &["thread"], now_ms).await?.remove(0);
//! assert_eq!(thread.map(|item| item.version), Some(1));
//!
//! // Round trips are observable: one GetItem for a one-key get.
//! let before = store.call_counter().snapshot();
//! store.get("thread#t1", &["thread"], now_ms).await?;
//! assert_eq!(store.call_counter().since(&before).get("GetItem"), Some(&1));
//! # Ok(())
//! # }
//! ```
//!
//! # The table
//!
//! One table, on-demand capacity, key `pk` (S, HASH) + `sk` (S, RANGE), TTL on `ttl`, and one
//! global secondary index, `listing` ([below](#listings-across-partitions)):
//! [`DynamoStore::create_table`], `infra/template.yaml` (SAM), or `infra/dynamodb-table.json`
//! for `aws dynamodb create-table --cli-input-json file://infra/dynamodb-table.json` followed
//! by `aws dynamodb update-time-to-live --table-name handoff --time-to-live-specification
//! Enabled=true,AttributeName=ttl`.
//!
//! | attribute | type | on | meaning |
//! |---|---|---|---|
//! | `pk` | S | all | the partition (`thread#…`) |
//! | `sk` | S | all | the item key (`thread`, `run#…`); chunks: `~c#{w}#{n}` |
//! | `v` | N | heads | version: 1 on creation, +1 per put over a live item |
//! | `w` | S | heads | write id: 128 random bits, new on every put; names the value's chunks |
//! | `b` | B | heads | the stored value, when it is inline |
//! | `c`, `h` | N, B | heads | chunk count and SHA-256 of the stored bytes, when chunked |
//! | `z` | N | heads | the value's length, present iff the stored bytes are zlib-compressed |
//! | `exp` | N | heads | expiry in Unix ms: exact filtering in reads and conditions |
//! | `ttl` | N | heads, chunks | expiry in Unix seconds, rounded up: the table's TTL attribute |
//! | `d`, `t` | B, N | chunks | chunk bytes; the writer's `now_ms` |
//! | `ls` | S | listed heads | the listing's scope (encoded like a partition): the `listing` index's partition key |
//! | `lo` | S | listed heads | the listing order: the `listing` index's sort key (below) |
//!
//! Keys are stored as they are when their first character is below `}`; the empty key and
//! keys starting with `}`, `~` or a non-ASCII character get a `}` in front (`é` → `}é`).
//! Internal items start with `~`, above every encoded user key, so `list` never reads them
//! and no user key can collide with them. Partitions are encoded the same way.
//!
//! Expiry is decided by `exp` against the caller's `now_ms` (never by whether TTL has deleted
//! the item yet — DynamoDB deletes expired items within days, emulators never): an expired
//! item reads as absent, satisfies `Absent` and fails `Version`.
//!
//! # Operations and their round trips
//!
//! Measured with [`DynamoStore::call_counter`] (see `tests/conformance.rs`), for values stored
//! inline (up to [`DynamoOptions::with_inline_max_bytes`], 300 KiB after compression):
//!
//! | call | DynamoDB requests |
//! |---|---|
//! | `get` of no key | 0 |
//! | `get` of 1 key | 1 `GetItem` (`ConsistentRead`) |
//! | `get` of 2–100 distinct keys | 1 `TransactGetItems` |
//! | `get` of more than 100 keys | 2 × ⌈n/100⌉ `BatchGetItem` (double collect, below) |
//! | `scan` of a prefix | 1 `Query` per MB of items (+ `BatchGetItem`s for chunked values) |
//! | `commit` of nothing, or only `Check(Always)` | 0 |
//! | `commit` of one put under `Absent` / `Version` | 1 `PutItem` |
//! | `commit` of one put under `Always` | 1 `UpdateItem`, or 1 `PutItem` when this process last saw the key absent or expired; +1 when that guess was wrong (below) |
//! | `commit` of one delete under `Always` / `Absent` | 1 `DeleteItem` |
//! | `commit` of one delete under `Version` | 1 `TransactWriteItems` (for its idempotency token) |
//! | `commit` of one check | 1 `GetItem` (`ConsistentRead`) |
//! | `commit` of 2–100 writes | 1 `TransactWriteItems` |
//! | `list` | 1 `Query` (`ConsistentRead`) per MB of items read (DynamoDB pages by item size, not projection) |
//! | `list_index` of `limit` hits | 1 `Query` of the `listing` index (eventually consistent); more only when expired entries (or 1 MB pages) leave it short |
//!
//! Chunked values add: for a put, ⌈chunks/25⌉ `BatchWriteItem` before the commit (sent
//! concurrently); for a get, ⌈chunks/100⌉ `BatchGetItem` (more if a response passes 16 MB);
//! after a commit that replaces or deletes a chunked value this process has read or written,
//! ⌈old chunks/25⌉ `BatchWriteItem` deleting them. A 5 MiB incompressible value is 15 chunks
//! of 350 KiB: its put is 2 requests, its get 2.
//!
//! ## Per engine operation
//!
//! Measured end to end by `tests/engine_calls.rs` (the demo agent through
//! [`handoff_core::Engine`] on this store against `moto_server`), values inline:
//!
//! | operation | before `RUN_STARTED` | after it | total |
//! |---|---|---|---|
//! | new thread's first run, ending in an interrupt | 1 `TransactWriteItems` (claim, conditional on no thread, no run record and no leftovers: no read first) | 1 `TransactWriteItems` (thread head, pending interrupts, run log, the run's history page) | 0 reads, 2 writes |
//! | later run ending in an interrupt | 1 `TransactGetItems` (thread, run) + 1 `TransactWriteItems` (claim) | as above; on a thread with history, 1 `Query` for its pages first | 1 read, 2 writes (+1 `Query` with history) |
//! | resume | 1 `TransactGetItems` (thread, run, resume record) + 1 `TransactWriteItems` (claim) | 1 `Query` for the history pages (none when the body resends the history: the head's digest recognises it), the agent's own calls, then 1 `TransactWriteItems` (thread head, run log, resume record, the run's history page) | demo refund, answers only: 4 reads, 5 writes |
//! | duplicate resume (same answer, any runId) of a finished resume | 1 `TransactGetItems` | none: a replay | 1 read, 0 writes |
//! | duplicate resume of a resume still in flight | 1 `TransactGetItems` + 1 `GetItem` (its run) | – | answered busy (or re-executed if abandoned) |
//! | retried POST (same runId and body) of a finished run | 1 `TransactGetItems`; a thread's first run sends its claim's `TransactWriteItems` first, refused by the stored thread | none: a replay | 1 read, 0 writes (a first run: + 1 refused write) |
//! | `GET /threads/{id}` | – | – | 1 `GetItem` (head) + 1 `Query` (history pages) |
//! | `GET …/runs/{runId}/events` | – | – | 1 `GetItem`; + 1 `Query` of the history pages for an interrupted run (its `MESSAGES_SNAPSHOT` is stored by reference) |
//!
//! A run counts as a thread's first when it answers nothing and its messages hold no
//! assistant or tool message (what `@ag-ui/client` and CopilotKit send for a new thread). A
//! client that sends only its new message on later turns also reads so: each of those claims
//! first sends the blind transaction, which the stored thread refuses (a refused condition
//! still consumes write capacity), then reads and claims as a later run.
//!
//! The demo refund's own calls, inside the resume: `ctx.effect` brackets the side effect with
//! two fenced `TransactWriteItems`, the first writing its "started" record under `Absent`
//! without reading it first (only a replay or an attempt in doubt, whose first write fails,
//! then reads it: 1 `GetItem`); the ledger update is 1 `GetItem` + 1 `PutItem`. A duplicate resume costs one read because the
//! finish commit stores a copy of the run record in the resume record (the run log is written
//! twice, in one transaction; large ones go to chunks like any value). Values over the inline
//! limit add the chunk requests listed above.
//!
//! ## One chat turn plus one approval pair
//!
//! What `make bench`'s `history-cost` counts for a chat turn and an approval pair (run,
//! then resume with one effect), clients resending the history they hold as `@ag-ui/client`
//! does: 11 requests, the same at 10, 100 and 1,000 messages. Every batch below has at
//! least two items that must apply all or nothing, so each is a transaction (2 units per
//! item); a one-write batch would be a single-item call.
//!
//! | request | items | why it exists |
//! |---|---|---|
//! | claim read, each run (3) | `TransactGetItems`: thread, run, marker (+ resume record, audit head on a resume) | the head's version for the claim's condition; a run or resume record of this request means a retry or duplicate, answered by replay without a write; the marker tells an expired thread's leftovers; the audit head is the chain a resume's answers and effects extend. One snapshot, so the claim decides on one state |
//! | claim commit, each run (3) | `TransactWriteItems`: thread, run (+ resume record) | takes the thread under the version read and the run (and answer) under `Absent`: exactly one claimant, an answer claimed once; the run record a retried POST of this request finds, holding the request a re-drive starts from (listed by the lease's end until the finish rewrites it) |
//! | effect started | `TransactWriteItems`: thread (check), effect record, audit entry, audit head | durable before the side effect runs, fenced by the claim's head version (a run that lost its claim cannot start one); written under `Absent` without reading it first |
//! | effect done | `TransactWriteItems`: thread (check), effect record | the result durable before the agent goes on, so a re-executed run replays it instead of running the side effect again |
//! | finish, each run (3) | `TransactWriteItems`: thread, run, history page (+ pending interrupts; on a resume: resume record, interrupts deleted, audit entry and head) | the turn's messages, the run's log and the released head in one step; an interrupt is durable before `RUN_FINISHED` |
//!
//! No history page is read: the head's digest recognises the history each body resends. A
//! resume sending only its answers adds 1 `Query` for the pages (12 requests). Request
//! units, counted by `handoff-tests`' `dynamo_bill`: about 60 write and 22 read units per
//! window, $0.08 per 1,000 windows at the on-demand prices `history-cost` prints.
//!
//! Single-item calls cost half the write units of a one-item transaction and carry
//! `ReturnValuesOnConditionCheckFailure = ALL_OLD`: when a condition fails and the current
//! item carries the put's own write id, the SDK had retried a request that already applied,
//! and the commit succeeds. Transactions carry a `ClientRequestToken`, kept for as long as
//! the same request may still apply (SDK retries, `TransactionInProgressException`) and
//! renewed only once it definitely did not, which does the same for them: DynamoDB answers a
//! repeated token with the first attempt's success instead of applying it twice. (A
//! single-item delete has neither a put's write id nor a token, so a delete under `Version`
//! goes through a transaction.)
//!
//! # Consistency
//!
//! - `get` of several keys is one snapshot: `TransactGetItems` is serializable with
//!   `TransactWriteItems` (a `BatchGetItem` is not: it can return one item from before a
//!   transaction and another from after it). Over 100 keys, or if `TransactGetItems` rejects
//!   the request (4 MB of items; moto allows only 25), the store reads every item with
//!   `BatchGetItem`, then every item's write id again, and returns the first read if no write
//!   id changed (write ids are unique per put, so no item changed in between), else repeats.
//! - Transactions cancelled by `TransactionConflict` or throttling, single-item writes
//!   refused with `TransactionConflictException` (a transaction in flight on the item), and
//!   unprocessed batch items are retried with backoff (20 ms doubling up to 1 s, 8 times),
//!   then reported as [`StoreError::Unavailable`].
//! - `Condition::Always` puts must produce "live version + 1, or 1", which no single
//!   DynamoDB expression can (`if_not_exists` cannot see expiry). The store guesses from what
//!   this process last saw of the key (live or unknown → `UpdateItem`/`Update` with
//!   `v = if_not_exists(v, 0) + 1` conditioned on an absent or unexpired item; absent or
//!   expired → `Put` at version 1 conditioned on absence or expiry); a wrong guess (an
//!   update meeting an expired item TTL has not deleted yet, a put meeting a live item) fails
//!   only its own condition and the batch is resent with that write flipped. Conditional
//!   writes never need this.
//!
//! # Listings across partitions
//!
//! A put carrying an [`IndexEntry`](handoff_core::IndexEntry) writes two more attributes on
//! its head item, in the same `PutItem` / `UpdateItem` / `TransactWriteItems` as the item (no
//! other item, no cross-partition transaction):
//!
//! - `ls`: the scope, encoded like a partition (`""` → `}`), at most 2 KB;
//! - `lo`: `u64::MAX - rank` in 20 zero-padded digits, the partition, U+0001 U+0001, the key;
//!   in partition and key U+0000 is written U+0001 U+0002 and U+0001 is written U+0001 U+0003.
//!   Its ascending UTF-8 order (DynamoDB's order for string keys) is exactly the listing's:
//!   rank descending, then partition, then key, ascending as Rust compares strings, for every
//!   string. Unique per item, so a page starts strictly after its `after` hit with
//!   `lo > :after`. At most 1 KB (DynamoDB's limit on an index sort key): listing an item
//!   whose partition and key pass about 1,000 bytes together is [`StoreError::TooLarge`].
//!
//! A put without an entry leaves them out (`PutItem`) or `REMOVE`s them (the `UpdateItem` of
//! an unconditional put); a delete, or TTL's deletion, takes them with the item. Chunk items
//! never carry them.
//!
//! The table's global secondary index **`listing`** ([`LISTING_INDEX`]) has `ls` (S) as
//! partition key and `lo` (S) as sort key, and projects `exp` besides the keys
//! (`ProjectionType: INCLUDE`, `NonKeyAttributes: [exp]`; every index also projects `pk` and
//! `sk`, from which a hit's partition and key are decoded). Items without `ls` are not in
//! it. `list_index` is one `Query` on `ls = :scope [AND lo > :after]`, ascending, `Limit` the
//! hits still wanted, filtering out entries whose `exp` has passed `now_ms` (expired items are
//! never listed, whatever TTL's deletion lag), repeated from `LastEvaluatedKey` until `limit`
//! live hits or the end. A query of a table without the index is a [`StoreError::Backend`]
//! naming it; [`DynamoStore::create_table`] adds it to an existing table.
//!
//! Costs (DynamoDB's rules for global secondary index writes): a put that lists an item adds
//! one index write; a put that changes `ls` or `lo` (a new rank) adds two (the old entry
//! deleted, the new one put); a put that keeps both but changes `exp` adds one; a put that
//! changes none of `ls`, `lo`, `exp` writes nothing to the index, and neither does any write
//! of an item that is not listed before or after it; unlisting or deleting a listed item adds
//! one. Each index write is one write request unit per KB of the entry (keys, `pk`, `sk`,
//! `exp`: one for ordinary names), on top of the table's write. Reads cost half a read unit
//! per 4 KB of entries read, expired ones included.
//!
//! Index reads are **eventually consistent** (DynamoDB offers no other read of a global
//! secondary index): a hit may lag its commit by the index's propagation, typically well
//! under a second, and may name an item since re-ranked, unlisted or deleted. Callers read
//! the item itself (consistently) and trust that, as the core's store docs require.
//!
//! # Large values
//!
//! Values of at least 4 KiB ([`DynamoOptions::with_compression`]) are zlib-compressed
//! (fastest level, pure Rust) when that saves an eighth; a 64 KiB sample is tried first so
//! incompressible bytes cost little. Stored bytes over 300 KiB — or the largest values of a
//! batch whose inline bytes would pass 3 MiB, to keep the transaction under 4 MB — go to
//! chunk items of 350 KiB, written with `BatchWriteItem` *before* the commit. Chunks are
//! immutable and named by the put's write id (unique per put, rather than by content: a
//! content address could be re-put by one writer while another deletes it as garbage); the
//! head records their count and SHA-256, which every read verifies.
//!
//! Garbage: a commit that fails its conditions deletes the chunks it wrote. A commit that
//! replaces or deletes a chunked value deletes the old chunks when this process knows them
//! (it read or wrote that value); chunks of expiring values carry the value's `ttl` and go
//! with it. What remains — chunks of a never-expiring value replaced by a process that never
//! saw it, or of a commit that ended in [`StoreError::Unavailable`] — is unreferenced and
//! harmless, and can be found as `~c#{w}#…` items whose `w` no head carries. A reader racing
//! a replacement may find chunks already deleted: it reads again (up to 4 times).
//!
//! # Errors
//!
//! | DynamoDB | [`StoreError`] |
//! |---|---|
//! | condition failed (`ConditionalCheckFailedException`, or `ConditionalCheckFailed` in a transaction's `CancellationReasons`) | `ConditionFailed { index }`, the first failing write of the batch |
//! | no connection, timeout, unreadable response, throttling, 5xx, conflicts after retries | `Unavailable` |
//! | a key over 1 KB / partition over 2 KB, over 100 writes in a batch, size validation errors | `TooLarge` |
//! | other validation errors, a missing table, access denied, malformed items | `Backend` |
//! | `list_index` on a table without the `listing` index (or while it is being built) | `Backend`, naming the index |
//! | an index entry too long for the `listing` index's keys | `TooLarge` |
//!
//! The SDK's own retry policy (standard, 3 attempts by default) runs before any of these.
//!
//! # Testing
//!
//! `tests/conformance.rs` runs the whole `handoff-store-conformance` suite, and this crate's
//! own checks (round-trip counts, chunking, expiry, faults), against a real `moto_server`
//! started on a free port: `$MOTO_SERVER`, else `.venv/bin/moto_server` at the repository
//! root (`make setup` installs it from `requirements-dev.txt`), else `PATH`; the tests fail,
//! never skip, without one. moto serves requests on parallel threads without locking its
//! DynamoDB backend, so its transactions are not atomic against concurrent requests (two
//! `Absent` creations can both win); the test client therefore sends moto one request at a
//! time, which leaves the store's callers interleaving at request granularity, as DynamoDB
//! linearizes them.

mod codec;
mod counter;
mod errors;
mod keys;
mod listing;
mod read;
mod table;
mod write;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use handoff_core::{IndexHit, Item, Store, StoreError, Write};

pub use counter::CallCounter;

/// The name of the table's TTL attribute (epoch seconds).
pub const TTL_ATTRIBUTE: &str = codec::TTL;

/// The name of the global secondary index [`Store::list_index`] queries (see the
/// [crate docs](crate#listings-across-partitions)).
pub const LISTING_INDEX: &str = codec::LISTING_INDEX;

/// Tuning for [`DynamoStore`]; the defaults suit DynamoDB's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamoOptions {
    inline_max_bytes: usize,
    chunk_bytes: usize,
    compress_min_bytes: Option<usize>,
}

/// The largest inline value or chunk: DynamoDB items hold 400 KB including keys and names.
const MAX_ITEM_PAYLOAD: usize = 380_000;

impl Default for DynamoOptions {
    fn default() -> Self {
        Self {
            inline_max_bytes: 300 * 1024,
            chunk_bytes: 350 * 1024,
            compress_min_bytes: Some(4 * 1024),
        }
    }
}

impl DynamoOptions {
    /// Stored bytes (after compression) above which a value goes to chunks. Default 300 KiB;
    /// at most 380 000. Lower values keep head items small, so `list` (which pays for every
    /// item it reads in full) gets cheaper and `get`s of large values need a second request.
    pub fn with_inline_max_bytes(mut self, bytes: usize) -> Self {
        self.inline_max_bytes = bytes.min(MAX_ITEM_PAYLOAD);
        self
    }

    /// Bytes per chunk item. Default 350 KiB; between 1 KiB and 380 000.
    pub fn with_chunk_bytes(mut self, bytes: usize) -> Self {
        self.chunk_bytes = bytes.clamp(1024, MAX_ITEM_PAYLOAD);
        self
    }

    /// Compress values of at least `min_bytes` when that saves an eighth (`None`: never).
    /// Default 4 KiB: below one read unit nothing is gained.
    pub fn with_compression(mut self, min_bytes: Option<usize>) -> Self {
        self.compress_min_bytes = min_bytes;
        self
    }

    /// See [`with_inline_max_bytes`](Self::with_inline_max_bytes).
    pub fn inline_max_bytes(&self) -> usize {
        self.inline_max_bytes
    }

    /// See [`with_chunk_bytes`](Self::with_chunk_bytes).
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// See [`with_compression`](Self::with_compression).
    pub fn compress_min_bytes(&self) -> Option<usize> {
        self.compress_min_bytes
    }
}

/// What this process last saw of a key: the guess for unconditional puts and the chunk set a
/// replacing commit turns into garbage.
#[derive(Debug, Clone)]
enum Hint {
    Absent,
    Present {
        exp: Option<u64>,
        chunks: Option<(String, u32)>,
    },
}

/// Hints kept before the map is cleared (they are an optimisation, never needed for
/// correctness).
const MAX_HINTS: usize = 4096;

/// [`Store`] on a DynamoDB table; see the [crate docs](crate) for the layout and costs.
///
/// Cheap to share behind an `Arc`; every call is independent (no connection state besides
/// the SDK client's pool).
pub struct DynamoStore {
    client: Client,
    table: String,
    options: DynamoOptions,
    counter: CallCounter,
    hints: Mutex<HashMap<(String, String), Hint>>,
}

impl std::fmt::Debug for DynamoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamoStore")
            .field("table", &self.table)
            .field("options", &self.options)
            .field("calls", &self.counter.total())
            .field("hints", &self.hints().len())
            .finish_non_exhaustive()
    }
}

impl DynamoStore {
    /// A store on `table` (which must exist, see [`create_table`](Self::create_table)) with
    /// default options.
    ///
    /// The client is rebuilt from its configuration with a [`CallCounter`] added; everything
    /// else (endpoint, credentials, retry and timeout settings) is kept.
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self::with_options(client, table, DynamoOptions::default())
    }

    /// A store with `options`.
    pub fn with_options(client: Client, table: impl Into<String>, options: DynamoOptions) -> Self {
        let counter = CallCounter::new();
        let config = client
            .config()
            .to_builder()
            .interceptor(counter.clone())
            .build();
        Self {
            client: Client::from_conf(config),
            table: table.into(),
            options,
            counter,
            hints: Mutex::new(HashMap::new()),
        }
    }

    /// Creates the table if it does not exist: on-demand capacity, `pk` (S) hash key, `sk`
    /// (S) range key, the global secondary index `listing` ([`LISTING_INDEX`]: `ls` (S) hash,
    /// `lo` (S) range, projecting `exp`); waits until it is `ACTIVE` and enables TTL on `ttl`
    /// ([`TTL_ATTRIBUTE`]).
    ///
    /// An existing table without the index gets it (`UpdateTable`; DynamoDB backfills it from
    /// the items already written), and the call waits until it is `ACTIVE` (about two
    /// minutes at most, then [`StoreError::Unavailable`]; the index keeps building). Fails if
    /// the table exists with TTL on another attribute, or with an index `listing` of other
    /// keys or without `exp`.
    pub async fn create_table(client: &Client, name: &str) -> Result<(), StoreError> {
        table::create_table(client, name).await
    }

    /// DynamoDB requests this store has sent, per operation (every attempt counts).
    pub fn call_counter(&self) -> &CallCounter {
        &self.counter
    }

    /// The client the store uses (with its call counter installed).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The table name.
    pub fn table_name(&self) -> &str {
        &self.table
    }

    /// The options in use.
    pub fn options(&self) -> &DynamoOptions {
        &self.options
    }

    fn hints(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Hint>> {
        // Hints are replaced whole; a panic elsewhere cannot leave one half-written.
        self.hints.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn hint(&self, partition: &str, key: &str) -> Option<Hint> {
        self.hints()
            .get(&(partition.to_owned(), key.to_owned()))
            .cloned()
    }

    fn set_hints(&self, partition: &str, hints: impl IntoIterator<Item = (String, Hint)>) {
        let mut map = self.hints();
        for (key, hint) in hints {
            if map.len() >= MAX_HINTS {
                map.clear();
            }
            map.insert((partition.to_owned(), key), hint);
        }
    }
}

#[async_trait]
impl Store for DynamoStore {
    fn system_name(&self) -> &'static str {
        "dynamodb"
    }

    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        self.get_impl(partition, keys, now_ms).await
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.commit_impl(partition, writes, now_ms).await
    }

    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.list_impl(partition, prefix, now_ms).await
    }
    async fn scan(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<Item>, StoreError> {
        self.scan_impl(partition, prefix, now_ms).await
    }

    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        self.list_index_impl(scope, after, limit, now_ms).await
    }
}
