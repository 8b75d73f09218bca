//! `get` (one consistent snapshot of heads, then their chunks) and `list`.

use std::collections::{HashMap, HashSet};

use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, Get, KeysAndAttributes, TransactGetItem};
use handoff_core::store::is_live;
use handoff_core::{Item, StoreError};

use crate::codec::{self, Body, EXP, Head, PK, SK, W, key, num, s};
use crate::errors::{map_sdk, transient_reason};
use crate::keys::{INTERNAL, MAX_PK_BYTES, MAX_SK_BYTES, chunk_sk, decode, encode};
use crate::write::MAX_BACKOFFS;
use crate::{DynamoStore, Hint};

/// DynamoDB's limit on items in one `TransactGetItems`.
pub(crate) const MAX_TRANSACT_GET_ITEMS: usize = 100;
/// DynamoDB's limit on keys in one `BatchGetItem`.
const BATCH_GET_KEYS: usize = 100;
/// How often a read starts over when a chunked value changes under it.
const READ_ATTEMPTS: usize = 4;

type RawItem = HashMap<String, AttributeValue>;

impl DynamoStore {
    pub(crate) async fn get_impl(
        &self,
        partition: &str,
        keys: &[&str],
        now_ms: u64,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let pk = encode(partition);
        if pk.len() > MAX_PK_BYTES {
            // No such partition can have been written.
            return Ok(vec![None; keys.len()]);
        }
        let mut seen = HashSet::new();
        let distinct: Vec<(&str, String)> = keys
            .iter()
            .filter(|k| seen.insert(**k))
            .map(|k| (*k, encode(k)))
            // A key too long for a sort key cannot have been written.
            .filter(|(_, sk)| sk.len() <= MAX_SK_BYTES)
            .collect();
        let sks: Vec<String> = distinct.iter().map(|(_, sk)| sk.clone()).collect();

        for _ in 0..READ_ATTEMPTS {
            let heads = self.read_heads(&pk, &sks).await?;
            self.set_hints(
                partition,
                distinct.iter().map(|(k, sk)| {
                    let hint = match heads.get(sk) {
                        Some(head) => Hint::Present {
                            exp: head.exp,
                            chunks: head.chunks(),
                        },
                        None => Hint::Absent,
                    };
                    ((*k).to_owned(), hint)
                }),
            );
            let Some(mut values) = self.assemble(&pk, heads, now_ms).await? else {
                // A chunked value was replaced (and its chunks collected) between reading its
                // head and its chunks: read again.
                continue;
            };
            return Ok(keys
                .iter()
                .map(|k| {
                    let sk = encode(k);
                    values.get_mut(&sk).map(|(version, value, exp)| Item {
                        key: (*k).to_owned(),
                        version: *version,
                        value: value.clone(),
                        expires_at_ms: *exp,
                    })
                })
                .collect());
        }
        Err(StoreError::Unavailable(format!(
            "chunked values kept being replaced while read ({READ_ATTEMPTS} attempts)"
        )))
    }

    /// Live values by sort key, or `None` when a chunk is missing.
    async fn assemble(
        &self,
        pk: &str,
        heads: HashMap<String, Head>,
        now_ms: u64,
    ) -> Result<Option<HashMap<String, (u64, Vec<u8>, Option<u64>)>>, StoreError> {
        let live: Vec<Head> = heads
            .into_values()
            .filter(|head| is_live(head.exp, now_ms))
            .collect();
        let chunk_sks: Vec<String> = live
            .iter()
            .filter_map(|head| match head.body {
                Body::Chunked { count, .. } => Some((0..count).map(|n| chunk_sk(&head.w, n))),
                Body::Inline(_) => None,
            })
            .flatten()
            .collect();
        let mut chunks = if chunk_sks.is_empty() {
            HashMap::new()
        } else {
            self.batch_get(pk, &chunk_sks, false).await?
        };
        let mut values = HashMap::with_capacity(live.len());
        for head in live {
            let bytes = match head.body {
                Body::Inline(bytes) => bytes,
                Body::Chunked { count, digest } => {
                    let mut bytes = Vec::new();
                    for n in 0..count {
                        let Some(chunk) = chunks.remove(&chunk_sk(&head.w, n)) else {
                            return Ok(None);
                        };
                        bytes.extend_from_slice(&codec::chunk_bytes(chunk)?);
                    }
                    if codec::digest(&bytes) != digest {
                        return Err(StoreError::Backend(format!(
                            "chunks of {:?} do not match their digest",
                            head.sk
                        )));
                    }
                    bytes
                }
            };
            let value = codec::unpack(bytes, head.raw_len)?;
            values.insert(head.sk, (head.version, value, head.exp));
        }
        Ok(Some(values))
    }

    /// The head items of `sks`, read as one consistent snapshot.
    ///
    /// - one key: `GetItem` with `ConsistentRead`;
    /// - up to 100: `TransactGetItems` (serializable: never half of a concurrent transaction);
    /// - more, or when `TransactGetItems` rejects the request (its 4 MB limit, or an emulator's
    ///   lower item limit): a double collect, see [`Self::double_collect`].
    async fn read_heads(
        &self,
        pk: &str,
        sks: &[String],
    ) -> Result<HashMap<String, Head>, StoreError> {
        let raw = match sks.len() {
            0 => HashMap::new(),
            1 => {
                let output = self
                    .client
                    .get_item()
                    .table_name(self.table.clone())
                    .set_key(Some(key(pk, &sks[0])))
                    .consistent_read(true)
                    .send()
                    .await
                    .map_err(|e| map_sdk("GetItem", e))?;
                output
                    .item
                    .map(|item| (sks[0].clone(), item))
                    .into_iter()
                    .collect()
            }
            n if n <= MAX_TRANSACT_GET_ITEMS => match self.transact_get(pk, sks).await? {
                Some(raw) => raw,
                None => self.double_collect(pk, sks).await?,
            },
            _ => self.double_collect(pk, sks).await?,
        };
        raw.into_iter()
            .map(|(sk, item)| Ok((sk, codec::parse_head(item)?)))
            .collect()
    }

    /// `TransactGetItems`; `None` if DynamoDB rejects the request as invalid (too large).
    async fn transact_get(
        &self,
        pk: &str,
        sks: &[String],
    ) -> Result<Option<HashMap<String, RawItem>>, StoreError> {
        let mut items = Vec::with_capacity(sks.len());
        for sk in sks {
            let get = Get::builder()
                .table_name(self.table.clone())
                .set_key(Some(key(pk, sk)))
                .build()
                .map_err(|e| StoreError::Backend(format!("building a get: {e}")))?;
            items.push(TransactGetItem::builder().get(get).build());
        }
        let mut conflicts = 0;
        loop {
            let result = self
                .client
                .transact_get_items()
                .set_transact_items(Some(items.clone()))
                .send()
                .await;
            let err = match result {
                Ok(output) => {
                    let responses = output.responses.unwrap_or_default();
                    if responses.len() != sks.len() {
                        return Err(StoreError::Backend(format!(
                            "TransactGetItems returned {} responses for {} keys",
                            responses.len(),
                            sks.len()
                        )));
                    }
                    return Ok(Some(
                        sks.iter()
                            .zip(responses)
                            .filter_map(|(sk, response)| response.item.map(|i| (sk.clone(), i)))
                            .collect(),
                    ));
                }
                Err(err) => err,
            };
            match err.as_service_error() {
                Some(TransactGetItemsError::TransactionCanceledException(cancelled))
                    if cancelled
                        .cancellation_reasons()
                        .iter()
                        .filter_map(|r| r.code())
                        .all(|c| c == "None" || transient_reason(c)) =>
                {
                    conflicts += 1;
                    if conflicts > MAX_BACKOFFS {
                        return Err(StoreError::Unavailable(format!(
                            "TransactGetItems kept conflicting with writes: {}",
                            cancelled.message().unwrap_or_default()
                        )));
                    }
                    self.backoff(conflicts).await;
                }
                Some(service) if service.meta().code() == Some("ValidationException") => {
                    tracing::debug!(error = %service, "TransactGetItems rejected; reading by double collect");
                    return Ok(None);
                }
                _ => return Err(map_sdk("TransactGetItems", err)),
            }
        }
    }

    /// A consistent snapshot from non-transactional reads: read every item, then read every
    /// item's write id again; if no write id changed, the first read is what all items held
    /// at the moment it ended (write ids are unique per put, so an item cannot change and
    /// change back unseen). Otherwise start over.
    async fn double_collect(
        &self,
        pk: &str,
        sks: &[String],
    ) -> Result<HashMap<String, RawItem>, StoreError> {
        for _ in 0..READ_ATTEMPTS {
            let first = self.batch_get(pk, sks, false).await?;
            let second = self.batch_get(pk, sks, true).await?;
            let unchanged = sks.iter().all(|sk| {
                first.get(sk).and_then(codec::w_of) == second.get(sk).and_then(codec::w_of)
                    && first.contains_key(sk) == second.contains_key(sk)
            });
            if unchanged {
                return Ok(first);
            }
        }
        Err(StoreError::Unavailable(format!(
            "items kept changing during a {}-key read",
            sks.len()
        )))
    }

    /// Consistent `BatchGetItem` of `sks` (100 per call, retrying unprocessed keys); with
    /// `ids_only`, only `sk` and `w` are returned.
    async fn batch_get(
        &self,
        pk: &str,
        sks: &[String],
        ids_only: bool,
    ) -> Result<HashMap<String, RawItem>, StoreError> {
        let mut found = HashMap::with_capacity(sks.len());
        for group in sks.chunks(BATCH_GET_KEYS) {
            let mut pending: Vec<RawItem> = group.iter().map(|sk| key(pk, sk)).collect();
            let mut backoffs = 0;
            while !pending.is_empty() {
                let mut request = KeysAndAttributes::builder()
                    .set_keys(Some(pending))
                    .consistent_read(true);
                if ids_only {
                    request = request
                        .projection_expression("#sk, #w")
                        .expression_attribute_names("#sk", SK)
                        .expression_attribute_names("#w", W);
                }
                let request = request
                    .build()
                    .map_err(|e| StoreError::Backend(format!("building a batch get: {e}")))?;
                let output = self
                    .client
                    .batch_get_item()
                    .request_items(self.table.clone(), request)
                    .send()
                    .await
                    .map_err(|e| map_sdk("BatchGetItem", e))?;
                for item in output
                    .responses
                    .and_then(|mut r| r.remove(&self.table))
                    .unwrap_or_default()
                {
                    let sk = codec::sk_of(&item)?.to_owned();
                    found.insert(sk, item);
                }
                pending = output
                    .unprocessed_keys
                    .and_then(|mut u| u.remove(&self.table))
                    .map(|k| k.keys)
                    .unwrap_or_default();
                if !pending.is_empty() {
                    backoffs += 1;
                    if backoffs > MAX_BACKOFFS {
                        return Err(StoreError::Unavailable(format!(
                            "BatchGetItem: {} keys still unprocessed after {MAX_BACKOFFS} retries",
                            pending.len()
                        )));
                    }
                    self.backoff(backoffs).await;
                }
            }
        }
        Ok(found)
    }

    pub(crate) async fn list_impl(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let mut keys = Vec::new();
        for item in self.query_prefix(partition, prefix, now_ms, true).await? {
            if let Some(key) = decode(codec::sk_of(&item)?) {
                keys.push(key.to_owned());
            }
        }
        keys.sort_unstable();
        Ok(keys)
    }

    /// One `Query` (paged by DynamoDB at 1 MB) for the items, then their chunks if any.
    pub(crate) async fn scan_impl(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
    ) -> Result<Vec<Item>, StoreError> {
        let pk = encode(partition);
        for _ in 0..READ_ATTEMPTS {
            let mut heads = HashMap::new();
            for item in self.query_prefix(partition, prefix, now_ms, false).await? {
                let head = codec::parse_head(item)?;
                heads.insert(head.sk.clone(), head);
            }
            let Some(values) = self.assemble(&pk, heads, now_ms).await? else {
                // A chunked value was replaced under the read: read again.
                continue;
            };
            let mut items: Vec<Item> = values
                .into_iter()
                .filter_map(|(sk, (version, value, exp))| {
                    decode(&sk).map(|key| Item {
                        key: key.to_owned(),
                        version,
                        value,
                        expires_at_ms: exp,
                    })
                })
                .collect();
            items.sort_unstable_by(|a, b| a.key.cmp(&b.key));
            return Ok(items);
        }
        Err(StoreError::Unavailable(format!(
            "items under {prefix:?} kept changing while being read"
        )))
    }

    /// The live head items of `partition` under `prefix` (user keys only), all pages of
    /// a consistent `Query`; `keys_only` projects the sort key and expiry.
    async fn query_prefix(
        &self,
        partition: &str,
        prefix: &str,
        now_ms: u64,
        keys_only: bool,
    ) -> Result<Vec<RawItem>, StoreError> {
        let pk = encode(partition);
        if pk.len() > MAX_PK_BYTES {
            return Ok(Vec::new());
        }
        let mut values =
            HashMap::from([(":pk".to_owned(), s(pk)), (":now".to_owned(), num(now_ms))]);
        let key_condition = if prefix.is_empty() {
            // Every user key, no internal item.
            values.insert(":internal".to_owned(), s(INTERNAL));
            "#pk = :pk AND #sk < :internal"
        } else {
            let encoded = encode(prefix);
            if encoded.len() > MAX_SK_BYTES {
                return Ok(Vec::new());
            }
            values.insert(":prefix".to_owned(), s(encoded));
            "#pk = :pk AND begins_with(#sk, :prefix)"
        };
        let mut names = HashMap::from([
            ("#pk".to_owned(), PK.to_owned()),
            ("#exp".to_owned(), EXP.to_owned()),
        ]);
        names.insert("#sk".to_owned(), SK.to_owned());
        let mut items = Vec::new();
        let mut start: Option<RawItem> = None;
        loop {
            let mut query = self
                .client
                .query()
                .table_name(self.table.clone())
                .consistent_read(true)
                .key_condition_expression(key_condition)
                .filter_expression("attribute_not_exists(#exp) OR #exp > :now")
                .set_expression_attribute_names(Some(names.clone()))
                .set_expression_attribute_values(Some(values.clone()))
                .set_exclusive_start_key(start.take());
            if keys_only {
                query = query.projection_expression("#sk, #exp");
            }
            let output = query.send().await.map_err(|e| map_sdk("Query", e))?;
            items.extend(
                output
                    .items
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|item| is_live(codec::exp_of(item), now_ms)),
            );
            match output.last_evaluated_key {
                Some(last) if !last.is_empty() => start = Some(last),
                _ => break,
            }
        }
        Ok(items)
    }
}
