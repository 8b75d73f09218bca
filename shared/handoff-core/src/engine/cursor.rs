//! Sealed list cursors: opaque to clients, unforgeable, bound to one list.
//!
//! A cursor is the position a page ended at, sealed with HMAC-SHA-256 under a key this
//! deployment keeps in its own store (created once, by whichever instance first needs it,
//! from the injected id source; every host's ids are random). The MAC covers the list's
//! scope too, so a cursor of one list (one owner's threads, one thread's history) fails
//! on any other: it carries no authority, and an altered or forged one is
//! [`CoreError::InvalidCursor`].

use futures::lock::Mutex;
use hmac::{Hmac, KeyInit, Mac};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Inner;
use crate::error::CoreError;
use crate::records;
use crate::store::{Condition, StoreError, Write};

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

/// `position` sealed for the list `scope`.
pub(crate) async fn seal<T: Serialize>(
    inner: &Inner,
    scope: &str,
    position: &T,
) -> Result<String, CoreError> {
    let key = inner.cursor_key.get(inner).await?;
    let payload = records::encode(position);
    let tag = tag(&key, scope, &payload);
    Ok([hex::encode(&payload), ".".into(), hex::encode(tag)].concat())
}

/// The position in `cursor`, if it was sealed for `scope` by this deployment.
pub(crate) async fn open<T: DeserializeOwned>(
    inner: &Inner,
    scope: &str,
    cursor: &str,
) -> Result<T, CoreError> {
    let (payload, sealed) = cursor.split_once('.').ok_or(CoreError::InvalidCursor)?;
    let payload = hex::decode(payload).map_err(|_| CoreError::InvalidCursor)?;
    let sealed = hex::decode(sealed).map_err(|_| CoreError::InvalidCursor)?;
    let key = inner.cursor_key.get(inner).await?;
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key).expect("HMAC takes any key");
    mac.update(scope.as_bytes());
    mac.update(&[0x1f]);
    mac.update(&payload);
    mac.verify_truncated_left(&sealed)
        .map_err(|_| CoreError::InvalidCursor)?;
    if sealed.len() != TAG_BYTES {
        return Err(CoreError::InvalidCursor);
    }
    serde_json::from_slice(&payload).map_err(|_| CoreError::InvalidCursor)
}
