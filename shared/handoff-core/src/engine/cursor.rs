//! Sealed list cursors: opaque to clients, unforgeable, bound to one list.
//!
//! A cursor is the position a page ended at, sealed with HMAC-SHA-256 under a key this
//! deployment keeps in its own store (created once, by whichever instance first needs it,
//! from the injected id source; every host's ids are random). The MAC covers the list's
//! scope too, so a cursor of one list (one owner's threads, one thread's history) fails
//! on any other: it carries no authority, and an altered or forged one is
//! [`CoreError::InvalidCursor`].

use std::marker::PhantomData;

use futures::lock::Mutex;
use hmac::{Hmac, KeyInit, Mac};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Inner;
use crate::error::CoreError;
use crate::records;
use crate::store::{Condition, IndexHit, StoreError, Write};

/// The partition of deployment-wide records (a control character keeps it apart from
/// every thread partition, whose ids refuse them).
const DEPLOYMENT_PARTITION: &str = "\u{1e}deployment";
const KEY_ITEM: &str = "cursor-key";
/// MAC bytes kept in a cursor (128 bits).
const TAG_BYTES: usize = 16;

#[derive(Serialize, Deserialize)]
struct KeyRecord {
    key: String,
}

/// The deployment's cursor key, read once per process.
#[derive(Default)]
pub(crate) struct CursorKey(Mutex<Option<[u8; 32]>>);

impl CursorKey {
    async fn get(&self, inner: &Inner) -> Result<[u8; 32], CoreError> {
        let mut cached = self.0.lock().await;
        if let Some(key) = *cached {
            return Ok(key);
        }
        let key = load_or_create(inner).await?;
        *cached = Some(key);
        Ok(key)
    }
}

async fn load_or_create(inner: &Inner) -> Result<[u8; 32], CoreError> {
    for _ in 0..3 {
        let now = inner.runtime.now_ms();
        if let Some(item) = inner
            .store
            .get_one(DEPLOYMENT_PARTITION, KEY_ITEM, now)
            .await?
        {
            let record: KeyRecord = records::decode(&item)?;
            return Ok(Sha256::digest(record.key.as_bytes()).into());
        }
        let ids = &inner.runtime.ids;
        let material = [ids.next_id("k"), ids.next_id("k"), ids.next_id("k")].concat();
        let write = Write::put(
            KEY_ITEM,
            Condition::Absent,
            records::encode(&KeyRecord { key: material }),
            None,
        );
        match inner
            .store
            .commit(DEPLOYMENT_PARTITION, vec![write], now)
            .await
        {
            // Read back rather than trusting our copy: one code path for every instance.
            Ok(()) | Err(StoreError::ConditionFailed { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(CoreError::Store(StoreError::Unavailable(
        "the cursor key could not be read back".into(),
    )))
}

fn tag(key: &[u8; 32], scope: &str, payload: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(scope.as_bytes());
    mac.update(&[0x1f]);
    mac.update(payload);
    mac.finalize().into_bytes()[..TAG_BYTES].to_vec()
}

/// `payload` sealed for `scope`: hex payload, `.`, hex truncated MAC.
async fn seal_bytes(inner: &Inner, scope: &str, payload: &[u8]) -> Result<String, CoreError> {
    let key = inner.cursor_key.get(inner).await?;
    let tag = tag(&key, scope, payload);
    Ok([hex::encode(payload), ".".into(), hex::encode(tag)].concat())
}

/// The payload of `sealed`, if this deployment sealed it for `scope`;
/// [`CoreError::InvalidCursor`] otherwise.
async fn open_bytes(inner: &Inner, scope: &str, sealed: &str) -> Result<Vec<u8>, CoreError> {
    let (payload, tag) = sealed.split_once('.').ok_or(CoreError::InvalidCursor)?;
    let payload = hex::decode(payload).map_err(|_| CoreError::InvalidCursor)?;
    let tag = hex::decode(tag).map_err(|_| CoreError::InvalidCursor)?;
    if tag.len() != TAG_BYTES {
        return Err(CoreError::InvalidCursor);
    }
    let key = inner.cursor_key.get(inner).await?;
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key).expect("HMAC takes any key");
    mac.update(scope.as_bytes());
    mac.update(&[0x1f]);
    mac.update(&payload);
    mac.verify_truncated_left(&tag)
        .map_err(|_| CoreError::InvalidCursor)?;
    Ok(payload)
}

impl super::Engine {
    /// `payload` sealed with HMAC-SHA-256 under this deployment's key (the one its list
    /// cursors use, kept in the store, so every instance opens what any instance sealed)
    /// for `scope`: a token a client carries and gives back unchanged (an MCP
    /// `requestState`, say). The payload is readable (hex), not secret; the MAC makes it
    /// unforgeable, and a token sealed for one scope opens under no other. Put what binds
    /// it (the principal, a purpose) in `scope` and its expiry in the payload.
    pub async fn seal(&self, scope: &str, payload: &[u8]) -> Result<String, CoreError> {
        seal_bytes(&self.inner, scope, payload).await
    }

    /// The payload of a token [`Engine::seal`](super::Engine::seal)ed for `scope`:
    /// [`CoreError::InvalidCursor`] when it was altered, forged, or sealed for another scope.
    pub async fn unseal(&self, scope: &str, sealed: &str) -> Result<Vec<u8>, CoreError> {
        open_bytes(&self.inner, scope, sealed).await
    }
}

/// The cursors of one list: positions of type `P`, sealed for the list's scope (one
/// owner's threads, one thread's history, one caller's inbox …). Every list pages through
/// this one type; only what a position holds differs.
pub(crate) struct ListCursor<'a, P> {
    inner: &'a Inner,
    scope: String,
    position: PhantomData<fn() -> P>,
}

impl<'a, P: Serialize + DeserializeOwned> ListCursor<'a, P> {
    /// The cursors of the list `scope`.
    pub(crate) fn new(inner: &'a Inner, scope: String) -> Self {
        ListCursor {
            inner,
            scope,
            position: PhantomData,
        }
    }

    /// `position` sealed for this list.
    pub(crate) async fn seal(&self, position: &P) -> Result<String, CoreError> {
        seal_bytes(self.inner, &self.scope, &records::encode(position)).await
    }

    /// The position in `cursor` (none without one), if this deployment sealed it for this
    /// list; [`CoreError::InvalidCursor`] otherwise.
    pub(crate) async fn open(&self, cursor: Option<&str>) -> Result<Option<P>, CoreError> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let payload = open_bytes(self.inner, &self.scope, cursor).await?;
        // The MAC covers the bytes as sent, so a position reads with the defaults below
        // whatever version of this struct sealed it.
        serde_json::from_slice(&payload).map_err(|_| CoreError::InvalidCursor)
    }
}

/// Where a page of an index listing (threads, audit entries, approvals) ended: at a
/// listing hit, after `skip` of that hit's own items (an inbox thread's interrupts).
///
/// Encoded as `{"r","p","k"}` plus `skip` when not 0: the threads' and audit's cursors
/// are the bytes they were before this type, and an inbox cursor sealed without `k`
/// still opens.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexPosition {
    r: u64,
    p: String,
    #[serde(default)]
    k: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    skip: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl IndexPosition {
    /// After `skip` items of `hit` (0: at the hit itself).
    pub(crate) fn new(hit: IndexHit, skip: usize) -> Self {
        IndexPosition {
            r: hit.rank,
            p: hit.partition,
            k: hit.key,
            skip,
        }
    }

    /// The hit, and how many of its items were shown.
    pub(crate) fn into_parts(self) -> (IndexHit, usize) {
        let hit = IndexHit {
            rank: self.r,
            partition: self.p,
            key: self.k,
        };
        (hit, self.skip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(key: &str) -> IndexHit {
        IndexHit {
            rank: 7,
            partition: "t\u{1f}a".into(),
            key: key.into(),
        }
    }

    #[test]
    fn a_listing_position_encodes_as_the_cursors_sealed_before_it() {
        // What the threads' and audit's own position structs wrote.
        #[derive(Serialize)]
        struct Before {
            r: u64,
            p: String,
            k: String,
        }
        let before = Before {
            r: 7,
            p: "t\u{1f}a".into(),
            k: "thread".into(),
        };
        let now = IndexPosition::new(hit("thread"), 0);
        assert_eq!(records::encode(&now), records::encode(&before));
    }

    #[test]
    fn an_inbox_position_sealed_before_it_still_reads() {
        // The approvals' own position struct had no key.
        let before = br#"{"r":7,"p":"t\u001fa","skip":3}"#;
        let read: IndexPosition = serde_json::from_slice(before).expect("reads");
        assert_eq!(read.into_parts(), (hit(""), 3));
        let now = IndexPosition::new(hit("approvals"), 3);
        let again: IndexPosition = serde_json::from_slice(&records::encode(&now)).unwrap();
        assert_eq!(again, now);
    }
}
