//! [`DurableStore`]: the Worker-side [`Store`] that routes each partition to its object.

use std::sync::Arc;

use async_trait::async_trait;
use futures::future::try_join_all;
use handoff_core::store::{IndexEntry, IndexHit, Item, Store, StoreError, Write, WriteOp};
use worker::send::{SendFuture, SendWrapper};
use worker::wasm_bindgen::JsValue;
use worker::{Env, Method, ObjectNamespace, Request, RequestInit, kv::KvStore};

use crate::blob::{self, BlobStats, Counters};
use crate::listing::{MAX_RANK, scope_object_name};
use crate::protocol::{
    ConditionFailedResponse, GetResponse, ListIndexResponse, ListResponse, Listed, StoreRequest,
    StoredValue, WireHit, WirePut, WireWrite,
};

/// Values up to this size stay in the object's row; larger ones go to KV.
pub const DEFAULT_INLINE_LIMIT: usize = 32 << 10;

/// Without KV, values must fit a Durable Object SQLite row (2 MB) with room to spare.
const ROW_VALUE_LIMIT: usize = 1_900_000;

/// A [`Store`] on Durable Objects (one per partition) with KV for large values.
///
/// Bindings are JavaScript handles, which are not `Send`; Workers run one
/// thread per isolate, so workers-rs's `SendWrapper`/`SendFuture` make them
/// usable behind the engine's `Send` bounds.
#[derive(Clone)]
pub struct DurableStore {
    objects: SendWrapper<ObjectNamespace>,
    blobs: Option<SendWrapper<KvStore>>,
    inline_limit: usize,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for DurableStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableStore")
            .field("blobs", &self.blobs.is_some())
            .field("inline_limit", &self.inline_limit)
            .finish_non_exhaustive()
    }
}

impl DurableStore {
    /// Partitions live in objects of `objects` (bound to [`crate::PartitionObject`]).
    pub fn new(objects: ObjectNamespace) -> Self {
        Self {
            objects: SendWrapper::new(objects),
            blobs: None,
            inline_limit: DEFAULT_INLINE_LIMIT,
            counters: Arc::default(),
        }
    }

    /// Values above the inline limit are written to `kv` by content hash.
    pub fn with_blobs(mut self, kv: KvStore) -> Self {
        self.blobs = Some(SendWrapper::new(kv));
        self
    }

    /// Changes the inline limit (tests use a small one to exercise KV).
    pub fn with_inline_limit(mut self, bytes: usize) -> Self {
        self.inline_limit = bytes;
        self
    }

    /// The store from the bindings `objects` (Durable Object namespace) and, if
    /// given, `blobs` (KV namespace).
    pub fn from_env(env: &Env, objects: &str, blobs: Option<&str>) -> worker::Result<Self> {
        let store = Self::new(env.durable_object(objects)?);
        Ok(match blobs {
            Some(binding) => store.with_blobs(env.kv(binding)?),
            None => store,
        })
    }

    /// What this store and its clones wrote to KV so far.
    pub fn blob_stats(&self) -> BlobStats {
        self.counters.snapshot()
    }

    /// The KV key prefix under which `partition`'s blobs are written
    /// (`blob/p/{scope}/`, the scope a hash of the partition name).
    pub fn blob_prefix(partition: &str) -> String {
        blob::partition_prefix(partition)
    }

    async fn call(
        &self,
        partition: &str,
        request: &StoreRequest,
    ) -> Result<(u16, String), StoreError> {
        let body =
            serde_json::to_string(request).map_err(|e| StoreError::Backend(e.to_string()))?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_body(Some(JsValue::from_str(&body)));
        let request = Request::new_with_init("https://partition.handoff/", &init)
            .map_err(|e| StoreError::Backend(e.to_string()))?;
        // Object overload, a reset object or a network blip all surface here: retryable.
        let stub = self.objects.get_by_name(partition).map_err(unavailable)?;
        let mut response = stub
            .fetch_with_request(request)
            .await
            .map_err(unavailable)?;
        let text = response.text().await.map_err(unavailable)?;
        Ok((response.status_code(), text))
    }

    fn to_wire(
        &self,
        partition: &str,
        write: Write,
    ) -> Result<(WireWrite, Option<Blob>), StoreError> {
        let index = write.index.map(listed).transpose()?;
        let (put, delete, blob) = match write.op {
            WriteOp::Put {
                value,
                expires_at_ms,
            } => {
                let (stored, blob) = self.place(partition, value, expires_at_ms)?;
                (
                    Some(WirePut {
                        value: stored,
                        expires_at_ms,
                        index,
                    }),
                    false,
                    blob,
                )
            }
            WriteOp::Delete => (None, true, None),
            WriteOp::Check => (None, false, None),
        };
        Ok((
            WireWrite {
                key: write.key,
                condition: write.condition.into(),
                put,
                delete,
            },
            blob,
        ))
    }

    /// Decides where a value lives: in the row, or in KV behind a reference.
    fn place(
        &self,
        partition: &str,
        value: Vec<u8>,
        expires_at_ms: Option<u64>,
    ) -> Result<(StoredValue, Option<Blob>), StoreError> {
        if value.len() <= self.inline_limit {
            return Ok((StoredValue::Inline(value), None));
        }
        if self.blobs.is_none() {
            if value.len() > ROW_VALUE_LIMIT {
                return Err(StoreError::TooLarge(format!(
                    "{} bytes exceed a Durable Object row and no KV namespace is bound",
                    value.len()
                )));
            }
            return Ok((StoredValue::Inline(value), None));
        }
        if value.len() > blob::KV_VALUE_LIMIT {
            return Err(StoreError::TooLarge(format!(
                "{} bytes exceed KV's 25 MiB",
                value.len()
            )));
        }
        let reference = blob::reference(partition, &value)?;
        Ok((
            StoredValue::Blob(reference.clone()),
            Some((reference, value, expires_at_ms)),
        ))
    }

    async fn get_inner(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        let request = StoreRequest::Get {
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            now_ms,
        };
        let (status, text) = self.call(partition, &request).await?;
        let response: GetResponse = parse(status, &text)?;
        if response.items.len() != keys.len() {
            return Err(StoreError::Backend(
                "object answered a different number of items".to_owned(),
            ));
        }
        try_join_all(response.items.into_iter().map(|row| async move {
            let Some(row) = row else { return Ok(None) };
            let value = match row.value {
                StoredValue::Inline(bytes) => bytes,
                StoredValue::Blob(reference) => {
                    let kv = self.blobs.as_ref().ok_or_else(|| {
                        StoreError::Backend(format!(
                            "{} is in KV but no KV namespace is bound",
                            row.key
                        ))
                    })?;
                    blob::read(kv, &reference).await?
                }
            };
            Ok(Some(Item {
                key: row.key,
                version: row.version,
                value,
                expires_at_ms: row.expires_at_ms,
            }))
        }))
        .await
    }

    async fn commit_inner(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let mut wire = Vec::with_capacity(writes.len());
        let mut blobs = Vec::new();
        for write in writes {
            let (write, blob) = self.to_wire(partition, write)?;
            wire.push(write);
            blobs.extend(blob);
        }
        let written: Vec<String> = blobs.iter().map(|b| b.0.kv_key.clone()).collect();
        if let (Some(kv), false) = (&self.blobs, blobs.is_empty())
            && let Err(err) = blob::put_all(kv, blobs, now_ms, &self.counters).await
        {
            // Some puts may have landed; no commit will reference them.
            self.release(partition, written).await;
            return Err(err);
        }
        let request = StoreRequest::Commit {
            partition: Some(partition.to_owned()),
            writes: wire,
            now_ms,
        };
        match self.send_commit(partition, &request).await {
            Ok(()) => Ok(()),
            // The object answered the refusal and released the batch's blobs itself.
            Err(refused @ StoreError::ConditionFailed { .. }) => Err(refused),
            // Not applied, or unknown whether applied: the object keeps the blobs that a
            // row references (a commit that did land) and deletes the others.
            Err(err) => {
                self.release(partition, written).await;
                Err(err)
            }
        }
    }

    async fn send_commit(&self, partition: &str, request: &StoreRequest) -> Result<(), StoreError> {
        let (status, text) = self.call(partition, request).await?;
        if status == 409 {
            let refused: ConditionFailedResponse = serde_json::from_str(&text)
                .map_err(|e| StoreError::Backend(format!("bad 409 body: {e}")))?;
            return Err(StoreError::ConditionFailed {
                index: refused.index,
            });
        }
        parse::<serde_json::Value>(status, &text).map(drop)
    }

    /// Hands blobs written for a commit that did not (knowingly) land back to the
    /// partition's object, which deletes those no row references. Best effort: if the
    /// object cannot be reached either, the blobs expire with their KV expiration.
    async fn release(&self, partition: &str, keys: Vec<String>) {
        if keys.is_empty() {
            return;
        }
        self.counters.released();
        let request = StoreRequest::Release { keys };
        let outcome = match self.call(partition, &request).await {
            Ok((status, text)) => parse::<serde_json::Value>(status, &text).map(drop),
            Err(err) => Err(err),
        };
        if let Err(err) = outcome {
            worker::console_warn!("handoff: could not release the blobs of a failed commit: {err}");
        }
    }

    async fn list_inner(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let request = StoreRequest::List {
            prefix: prefix.to_owned(),
            now_ms,
        };
        let (status, text) = self.call(partition, &request).await?;
        parse::<ListResponse>(status, &text).map(|r| r.keys)
    }

    async fn list_index_inner(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        // No stored rank passes MAX_RANK, so every entry follows a hit ranked above it.
        let after = after.filter(|hit| hit.rank <= MAX_RANK).map(|hit| WireHit {
            rank: hit.rank,
            partition: hit.partition.clone(),
            key: hit.key.clone(),
        });
        let request = StoreRequest::ListIndex {
            after,
            limit: u32::try_from(limit).unwrap_or(u32::MAX),
            now_ms,
        };
        let (status, text) = self.call(&scope_object_name(scope), &request).await?;
        parse::<ListIndexResponse>(status, &text).map(|r| {
            r.hits
                .into_iter()
                .map(|hit| IndexHit {
                    rank: hit.rank,
                    partition: hit.partition,
                    key: hit.key,
                })
                .collect()
        })
    }
}

type Blob = (crate::protocol::BlobRef, Vec<u8>, Option<u64>);

/// An index entry on the wire; the objects keep ranks exactly up to [`MAX_RANK`].
fn listed(entry: IndexEntry) -> Result<Listed, StoreError> {
    if entry.rank > MAX_RANK {
        return Err(StoreError::Backend(format!(
            "index rank {} exceeds {MAX_RANK}",
            entry.rank
        )));
    }
    Ok(Listed {
        scope: entry.scope,
        rank: entry.rank,
    })
}

fn unavailable(err: worker::Error) -> StoreError {
    StoreError::Unavailable(err.to_string())
}

fn parse<T: serde::de::DeserializeOwned>(status: u16, text: &str) -> Result<T, StoreError> {
    match status {
        200 => serde_json::from_str(text)
            .map_err(|e| StoreError::Backend(format!("bad object answer: {e}"))),
        // The runtime answers 503 when an object is overloaded or being reset.
        503 => Err(StoreError::Unavailable(text.to_owned())),
        _ => Err(StoreError::Backend(format!(
            "object answered {status}: {text}"
        ))),
    }
}

#[async_trait]
impl Store for DurableStore {
    fn system_name(&self) -> &'static str {
        "durable_object"
    }

    async fn get(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        SendFuture::new(self.get_inner(partition, keys, now_ms)).await
    }

    async fn commit(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        SendFuture::new(self.commit_inner(partition, writes, now_ms)).await
    }

    async fn list(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        SendFuture::new(self.list_inner(partition, prefix, now_ms)).await
    }

    async fn list_index(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        SendFuture::new(self.list_index_inner(scope, after, limit, now_ms)).await
    }
}
