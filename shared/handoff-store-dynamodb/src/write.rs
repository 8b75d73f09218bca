//! `commit`: conditional writes as one `TransactWriteItems` (or one single-item call), large
//! values written as chunks first.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::config::AsyncSleep;

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, DeleteRequest, Put, PutRequest,
    ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update, WriteRequest,
};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use futures::future::try_join_all;
use handoff_core::store::{condition_holds, is_live};
use handoff_core::{Condition, Item, StoreError, Write, WriteOp};

use crate::codec::{
    self, B, Body, C, D, EXP, H, PK, Packed, T, TTL, V, W, Z, blob, key, num, s, ttl_seconds,
};
use crate::errors::{classify, map_sdk, transient_reason};
use crate::keys::{MAX_PK_BYTES, MAX_SK_BYTES, chunk_sk, encode};
use crate::{DynamoStore, Hint};

/// DynamoDB's limit on actions in one `TransactWriteItems`.
pub(crate) const MAX_TRANSACTION_ITEMS: usize = 100;
/// Inline bytes one transaction may carry before its largest values move to chunks (the
/// request limit is 4 MB, keys and attribute names included).
const TRANSACTION_INLINE_BUDGET: usize = 3 * 1024 * 1024;
/// Rough per-action overhead of a transaction item besides its key and value.
const ACTION_OVERHEAD: usize = 256;
/// DynamoDB's limit on requests in one `BatchWriteItem`.
const BATCH_WRITE_ITEMS: usize = 25;
/// Attempts after wrong guesses for unconditional puts (see [`Kind::Put::live`]).
const MAX_GUESSES: usize = 8;
/// Attempts after transaction conflicts or unprocessed batch items.
pub(crate) const MAX_BACKOFFS: u32 = 8;

/// One write of the batch, as sent.
#[derive(Debug)]
struct Op {
    /// Position in the caller's batch.
    index: usize,
    key: String,
    sk: String,
    condition: Condition,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Put {
        plan: Plan,
        /// For `Condition::Always` only: whether this attempt assumes a live item (an
        /// `Update` that counts the version on) or an absent/expired one (a `Put` at version
        /// 1 conditioned on absence). A wrong guess fails its condition and flips.
        live: bool,
    },
    Delete,
    Check,
}

/// How one put is stored.
#[derive(Debug)]
struct Plan {
    /// Unique per put: names the chunks and lets a retried request recognise itself.
    w: String,
    packed: Packed,
    exp: Option<u64>,
    /// `Some((count, digest))` once the value goes to chunks.
    chunked: Option<(u32, Vec<u8>)>,
}

impl Plan {
    fn inline_len(&self) -> usize {
        if self.chunked.is_some() {
            0
        } else {
            self.packed.bytes.len()
        }
    }

    fn chunk(&mut self, chunk_bytes: usize) {
        let count = self.packed.bytes.len().div_ceil(chunk_bytes).max(1);
        let count = u32::try_from(count).unwrap_or(u32::MAX);
        self.chunked = Some((count, codec::digest(&self.packed.bytes)));
    }

    fn body(&self) -> Body {
        match &self.chunked {
            Some((count, digest)) => Body::Chunked {
                count: *count,
                digest: digest.clone(),
            },
            None => Body::Inline(self.packed.bytes.clone()),
        }
    }

    fn chunk_set(&self) -> Option<(String, u32)> {
        self.chunked
            .as_ref()
            .map(|(count, _)| (self.w.clone(), *count))
    }
}

/// What one attempt found.
enum Outcome {
    Done,
    /// Positions (into the ops) whose condition failed.
    Failed(Vec<usize>),
    /// Cancelled by a concurrent transaction or throttled (nothing applied): try again.
    Conflict(String),
    /// An earlier attempt with the same idempotency token is still running: try again with
    /// the same token, which reports that attempt's success instead of applying it twice.
    InProgress(String),
}

/// Expression attribute names and values, collected while an expression is written.
#[derive(Default)]
struct Expr {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expr {
    fn n(&mut self, attribute: &str) -> String {
        let placeholder = format!("#{attribute}");
        self.names.insert(placeholder.clone(), attribute.to_owned());
        placeholder
    }

    fn v(&mut self, name: &str, value: AttributeValue) -> String {
        let placeholder = format!(":{name}");
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    fn values(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }

    /// The condition for `condition`, `None` for `Always`.
    ///
    /// - `Absent`: `attribute_not_exists(pk) OR exp <= :now`;
    /// - `Version(v)`: `v = :v AND (attribute_not_exists(exp) OR exp > :now)`.
    fn condition(&mut self, condition: Condition, now_ms: u64) -> Option<String> {
        match condition {
            Condition::Always => None,
            Condition::Absent => {
                let (pk, exp, now) = (self.n(PK), self.n(EXP), self.v("now", num(now_ms)));
                Some(format!("attribute_not_exists({pk}) OR {exp} <= {now}"))
            }
            Condition::Version(version) => {
                let (v, exp) = (self.n(V), self.n(EXP));
                let (expected, now) = (self.v("v", num(version)), self.v("now", num(now_ms)));
                Some(format!(
                    "{v} = {expected} AND (attribute_not_exists({exp}) OR {exp} > {now})"
                ))
            }
        }
    }

    /// The condition of the "live" branch of an unconditional put: the item exists, is not
    /// expired, and was not written by this very put (a retried request that already applied).
    fn live(&mut self, w: &str, now_ms: u64) -> String {
        let (pk, exp, wn) = (self.n(PK), self.n(EXP), self.n(W));
        let (now, wv) = (self.v("now", num(now_ms)), self.v("w", s(w)));
        format!(
            "attribute_exists({pk}) AND (attribute_not_exists({exp}) OR {exp} > {now}) \
             AND (attribute_not_exists({wn}) OR {wn} <> {wv})"
        )
    }

    /// `SET v = v + 1, w, b | c h, [z], [exp ttl] REMOVE <the rest>`.
    fn update(&mut self, plan: &Plan) -> String {
        let mut set = Vec::new();
        let mut remove = Vec::new();
        let v = self.n(V);
        let one = self.v("one", num(1));
        set.push(format!("{v} = {v} + {one}"));
        let (wn, wv) = (self.n(W), self.v("nw", s(plan.w.clone())));
        set.push(format!("{wn} = {wv}"));
        let mut attributes: Vec<(&str, Option<AttributeValue>)> = Vec::new();
        match plan.body() {
            Body::Inline(bytes) => {
                attributes.push((B, Some(blob(bytes))));
                attributes.push((C, None));
                attributes.push((H, None));
            }
            Body::Chunked { count, digest } => {
                attributes.push((B, None));
                attributes.push((C, Some(num(u64::from(count)))));
                attributes.push((H, Some(blob(digest))));
            }
        }
        attributes.push((Z, plan.packed.raw_len.map(num)));
        attributes.push((EXP, plan.exp.map(num)));
        attributes.push((TTL, plan.exp.map(|exp| num(ttl_seconds(exp)))));
        for (attribute, value) in attributes {
            let name = self.n(attribute);
            match value {
                Some(value) => {
                    let placeholder = self.v(&format!("n{attribute}"), value);
                    set.push(format!("{name} = {placeholder}"));
                }
                None => remove.push(name),
            }
        }
        let mut expression = format!("SET {}", set.join(", "));
        if !remove.is_empty() {
            expression.push_str(&format!(" REMOVE {}", remove.join(", ")));
        }
        expression
    }
}

/// The full head item of a put at `version`.
fn head_item(pk: &str, sk: &str, version: u64, plan: &Plan) -> HashMap<String, AttributeValue> {
    let mut item = key(pk, sk);
    item.insert(V.to_owned(), num(version));
    item.insert(W.to_owned(), s(plan.w.clone()));
    match plan.body() {
        Body::Inline(bytes) => {
            item.insert(B.to_owned(), blob(bytes));
        }
        Body::Chunked { count, digest } => {
            item.insert(C.to_owned(), num(u64::from(count)));
            item.insert(H.to_owned(), blob(digest));
        }
    }
    if let Some(raw_len) = plan.packed.raw_len {
        item.insert(Z.to_owned(), num(raw_len));
    }
    if let Some(exp) = plan.exp {
        item.insert(EXP.to_owned(), num(exp));
        item.insert(TTL.to_owned(), num(ttl_seconds(exp)));
    }
    item
}

/// The version a put creates when sent as a full `Put` (not the live branch of `Always`).
fn put_version(condition: Condition) -> Result<u64, StoreError> {
    match condition {
        Condition::Always | Condition::Absent => Ok(1),
        Condition::Version(v) => v
            .checked_add(1)
            .ok_or_else(|| StoreError::Backend(format!("version {v} cannot be incremented"))),
    }
}

fn build_err(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("building {what}: {err}"))
}

impl Op {
    fn is_unconditional_put(&self) -> bool {
        matches!(self.kind, Kind::Put { .. }) && self.condition == Condition::Always
    }

    /// Whether a single-item call (no transaction) has the same semantics for this write.
    /// A `Delete` at a version goes through a transaction, whose idempotency token makes an
    /// SDK retry of an applied delete succeed instead of failing its condition.
    fn single_call_ok(&self) -> bool {
        !(matches!(self.kind, Kind::Delete) && matches!(self.condition, Condition::Version(_)))
    }
}

impl DynamoStore {
    pub(crate) async fn commit_impl(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let (pk, mut ops) = self.plan(partition, writes, now_ms)?;
        if ops.is_empty() {
            return Ok(());
        }
        // Chunk sets this process saw committed under the keys about to be replaced: garbage
        // once this commit succeeds. Taken before sending, so it never names chunks committed
        // after this commit.
        let replaced: Vec<(String, u32)> = ops
            .iter()
            .filter(|op| !matches!(op.kind, Kind::Check))
            .filter_map(|op| match self.hint(partition, &op.key) {
                Some(Hint::Present {
                    chunks: Some(chunks),
                    ..
                }) => Some(chunks),
                _ => None,
            })
            .collect();
        let written: Vec<(String, u32)> = ops
            .iter()
            .filter_map(|op| match &op.kind {
                Kind::Put { plan, .. } => plan.chunk_set(),
                _ => None,
            })
            .collect();

        self.write_chunks(&pk, &ops, now_ms).await?;
        let result = self.apply(&pk, &mut ops, now_ms).await;
        match &result {
            Ok(()) => {
                self.set_hints(
                    partition,
                    ops.iter().filter_map(|op| match &op.kind {
                        Kind::Put { plan, .. } => Some((
                            op.key.clone(),
                            Hint::Present {
                                exp: plan.exp,
                                chunks: plan.chunk_set(),
                            },
                        )),
                        Kind::Delete => Some((op.key.clone(), Hint::Absent)),
                        Kind::Check => None,
                    }),
                );
                self.delete_chunks(&pk, replaced, "replaced").await;
            }
            // The batch may have been applied: its chunks may be referenced.
            Err(StoreError::Unavailable(_)) => {}
            // Nothing was written: the chunks written for it are garbage.
            Err(_) => self.delete_chunks(&pk, written, "unused").await,
        }
        result
    }

    /// Validates the batch and decides how each value is stored.
    fn plan(
        &self,
        partition: &str,
        writes: Vec<Write>,
        now_ms: u64,
    ) -> Result<(String, Vec<Op>), StoreError> {
        let pk = encode(partition);
        if pk.len() > MAX_PK_BYTES {
            return Err(StoreError::TooLarge(format!(
                "partition name of {} bytes (DynamoDB allows {} in a partition key)",
                partition.len(),
                MAX_PK_BYTES - 1
            )));
        }
        let mut ops = Vec::with_capacity(writes.len());
        for (index, write) in writes.into_iter().enumerate() {
            let sk = encode(&write.key);
            if sk.len() > MAX_SK_BYTES {
                return Err(StoreError::TooLarge(format!(
                    "key of {} bytes at batch index {index} (DynamoDB allows {} in a sort key)",
                    write.key.len(),
                    MAX_SK_BYTES - 1
                )));
            }
            let kind = match write.op {
                // Holds whatever the item is: nothing to send.
                WriteOp::Check if write.condition == Condition::Always => continue,
                WriteOp::Check => Kind::Check,
                WriteOp::Delete => Kind::Delete,
                WriteOp::Put {
                    value,
                    expires_at_ms,
                } => {
                    let live = match self.hint(partition, &write.key) {
                        Some(Hint::Present { exp, .. }) => is_live(exp, now_ms),
                        Some(Hint::Absent) => false,
                        None => true,
                    };
                    let mut plan = Plan {
                        w: codec::unique_id(),
                        packed: codec::pack(value, self.options.compress_min_bytes),
                        exp: expires_at_ms,
                        chunked: None,
                    };
                    if plan.packed.bytes.len() > self.options.inline_max_bytes {
                        plan.chunk(self.options.chunk_bytes);
                    }
                    Kind::Put { plan, live }
                }
            };
            ops.push(Op {
                index,
                key: write.key,
                sk,
                condition: write.condition,
                kind,
            });
        }
        if ops.len() > MAX_TRANSACTION_ITEMS {
            return Err(StoreError::TooLarge(format!(
                "{} conditional writes in one batch (a DynamoDB transaction holds {MAX_TRANSACTION_ITEMS})",
                ops.len()
            )));
        }
        if ops.len() > 1 {
            // Keep the transaction under its 4 MB request limit: move the largest inline values
            // to chunks until the rest fits.
            let size = |ops: &[Op]| -> usize {
                ops.iter()
                    .map(|op| {
                        let value = match &op.kind {
                            Kind::Put { plan, .. } => plan.inline_len(),
                            _ => 0,
                        };
                        pk.len() + op.sk.len() + ACTION_OVERHEAD + value
                    })
                    .sum()
            };
            while size(&ops) > TRANSACTION_INLINE_BUDGET {
                let largest = ops
                    .iter_mut()
                    .filter_map(|op| match &mut op.kind {
                        Kind::Put { plan, .. } if plan.inline_len() > 0 => Some(plan),
                        _ => None,
                    })
                    .max_by_key(|plan| plan.inline_len());
                match largest {
                    Some(plan) => plan.chunk(self.options.chunk_bytes),
                    None => break,
                }
            }
        }
        Ok((pk, ops))
    }

    /// Writes the chunks of every chunked value (plain puts: immutable, named by write id).
    async fn write_chunks(&self, pk: &str, ops: &[Op], now_ms: u64) -> Result<(), StoreError> {
        let mut requests = Vec::new();
        for op in ops {
            let Kind::Put { plan, .. } = &op.kind else {
                continue;
            };
            if plan.chunked.is_none() {
                continue;
            }
            for (n, bytes) in plan
                .packed
                .bytes
                .chunks(self.options.chunk_bytes)
                .enumerate()
            {
                let n = u32::try_from(n).unwrap_or(u32::MAX);
                let mut item = key(pk, &chunk_sk(&plan.w, n));
                item.insert(D.to_owned(), blob(bytes.to_vec()));
                item.insert(T.to_owned(), num(now_ms));
                if let Some(exp) = plan.exp {
                    item.insert(TTL.to_owned(), num(ttl_seconds(exp)));
                }
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(|e| build_err("a chunk put", e))?;
                requests.push(WriteRequest::builder().put_request(put).build());
            }
        }
        self.batch_write(requests).await
    }

    /// Deletes chunk sets, best effort: a failure leaves garbage, never a wrong answer.
    async fn delete_chunks(&self, pk: &str, sets: Vec<(String, u32)>, why: &str) {
        let mut requests = Vec::new();
        for (w, count) in &sets {
            for n in 0..*count {
                match DeleteRequest::builder()
                    .set_key(Some(key(pk, &chunk_sk(w, n))))
                    .build()
                {
                    Ok(delete) => {
                        requests.push(WriteRequest::builder().delete_request(delete).build());
                    }
                    Err(e) => tracing::warn!(error = %e, "building a chunk delete"),
                }
            }
        }
        if let Err(e) = self.batch_write(requests).await {
            tracing::warn!(error = %e, partition = pk, "could not delete {why} chunks; they stay as garbage");
        }
    }

    /// `BatchWriteItem` in groups of 25, sent concurrently, retrying unprocessed items.
    async fn batch_write(&self, requests: Vec<WriteRequest>) -> Result<(), StoreError> {
        let groups: Vec<Vec<WriteRequest>> = requests
            .chunks(BATCH_WRITE_ITEMS)
            .map(<[WriteRequest]>::to_vec)
            .collect();
        try_join_all(groups.into_iter().map(|group| async move {
            let mut pending = group;
            let mut backoffs = 0;
            while !pending.is_empty() {
                let output = self
                    .client
                    .batch_write_item()
                    .request_items(self.table.clone(), pending)
                    .send()
                    .await
                    .map_err(|e| map_sdk("BatchWriteItem", e))?;
                pending = output
                    .unprocessed_items
                    .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                    .unwrap_or_default();
                if !pending.is_empty() {
                    backoffs += 1;
                    if backoffs > MAX_BACKOFFS {
                        return Err(StoreError::Unavailable(format!(
                            "BatchWriteItem: {} items still unprocessed after {MAX_BACKOFFS} retries",
                            pending.len()
                        )));
                    }
                    self.backoff(backoffs).await;
                }
            }
            Ok(())
        }))
        .await
        .map(drop)
    }

    /// Sends the batch until it commits or a condition genuinely fails.
    async fn apply(&self, pk: &str, ops: &mut [Op], now_ms: u64) -> Result<(), StoreError> {
        let mut guesses = 0;
        let mut conflicts = 0;
        // One token per distinct request: kept while an attempt may still apply, renewed once
        // the request changes or was definitely not applied.
        let mut token = codec::unique_id();
        loop {
            let outcome = if ops.len() == 1 && ops[0].single_call_ok() {
                self.single(pk, &ops[0], now_ms).await?
            } else {
                self.transact(pk, ops, now_ms, &token).await?
            };
            let in_progress = matches!(outcome, Outcome::InProgress(_));
            match outcome {
                Outcome::Done => return Ok(()),
                Outcome::Failed(positions) => {
                    // An unconditional put cannot fail: its failure only means the guess about
                    // the item's state was wrong. Any other failure fails the batch.
                    if let Some(index) = positions
                        .iter()
                        .filter(|&&p| !ops[p].is_unconditional_put())
                        .map(|&p| ops[p].index)
                        .min()
                    {
                        return Err(StoreError::ConditionFailed { index });
                    }
                    guesses += 1;
                    if guesses > MAX_GUESSES {
                        return Err(StoreError::Unavailable(format!(
                            "unconditional put kept racing with creations and deletions ({MAX_GUESSES} attempts)"
                        )));
                    }
                    for p in positions {
                        if let Kind::Put { live, .. } = &mut ops[p].kind {
                            *live = !*live;
                        }
                    }
                    token = codec::unique_id();
                }
                Outcome::Conflict(reason) | Outcome::InProgress(reason) => {
                    if !in_progress {
                        token = codec::unique_id();
                    }
                    conflicts += 1;
                    if conflicts > MAX_BACKOFFS {
                        return Err(StoreError::Unavailable(reason));
                    }
                    self.backoff(conflicts).await;
                }
            }
        }
    }

    /// One write as one single-item call (half the write cost of a transaction).
    async fn single(&self, pk: &str, op: &Op, now_ms: u64) -> Result<Outcome, StoreError> {
        let mut e = Expr::default();
        match &op.kind {
            Kind::Put { plan, live } if op.condition == Condition::Always && *live => {
                let update = e.update(plan);
                let condition = e.live(&plan.w, now_ms);
                let result = self
                    .client
                    .update_item()
                    .table_name(self.table.clone())
                    .set_key(Some(key(pk, &op.sk)))
                    .update_expression(update)
                    .condition_expression(condition)
                    .set_expression_attribute_names(e.names())
                    .set_expression_attribute_values(e.values())
                    .return_values_on_condition_check_failure(
                        ReturnValuesOnConditionCheckFailure::AllOld,
                    )
                    .send()
                    .await;
                match result {
                    Ok(_) => Ok(Outcome::Done),
                    Err(err) => match err.as_service_error() {
                        Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                            Ok(self_applied(failed.item(), plan))
                        }
                        _ => conflict_or("UpdateItem", err),
                    },
                }
            }
            Kind::Put { plan, .. } => {
                let condition = match op.condition {
                    Condition::Always => Condition::Absent,
                    other => other,
                };
                let item = head_item(pk, &op.sk, put_version(op.condition)?, plan);
                let result = self
                    .client
                    .put_item()
                    .table_name(self.table.clone())
                    .set_item(Some(item))
                    .set_condition_expression(e.condition(condition, now_ms))
                    .set_expression_attribute_names(e.names())
                    .set_expression_attribute_values(e.values())
                    .return_values_on_condition_check_failure(
                        ReturnValuesOnConditionCheckFailure::AllOld,
                    )
                    .send()
                    .await;
                match result {
                    Ok(_) => Ok(Outcome::Done),
                    Err(err) => match err.as_service_error() {
                        Some(PutItemError::ConditionalCheckFailedException(failed)) => {
                            Ok(self_applied(failed.item(), plan))
                        }
                        _ => conflict_or("PutItem", err),
                    },
                }
            }
            Kind::Delete => {
                let result = self
                    .client
                    .delete_item()
                    .table_name(self.table.clone())
                    .set_key(Some(key(pk, &op.sk)))
                    .set_condition_expression(e.condition(op.condition, now_ms))
                    .set_expression_attribute_names(e.names())
                    .set_expression_attribute_values(e.values())
                    .send()
                    .await;
                match result {
                    Ok(_) => Ok(Outcome::Done),
                    Err(err) => match err.as_service_error() {
                        Some(DeleteItemError::ConditionalCheckFailedException(_)) => {
                            Ok(Outcome::Failed(vec![0]))
                        }
                        _ => conflict_or("DeleteItem", err),
                    },
                }
            }
            Kind::Check => {
                // A consistent read answers "does the condition hold now" exactly like a
                // one-item ConditionCheck, for one read unit instead of two write units.
                let output = self
                    .client
                    .get_item()
                    .table_name(self.table.clone())
                    .set_key(Some(key(pk, &op.sk)))
                    .consistent_read(true)
                    .projection_expression("#v, #exp")
                    .expression_attribute_names("#v", V)
                    .expression_attribute_names("#exp", EXP)
                    .send()
                    .await
                    .map_err(|e| map_sdk("GetItem", e))?;
                let current = match output.item {
                    Some(item) => {
                        let exp = codec::exp_of(&item);
                        let version = match item.get(V) {
                            Some(AttributeValue::N(n)) => n.parse().map_err(|_| {
                                StoreError::Backend(format!("malformed item: `v` = {n}"))
                            })?,
                            _ => {
                                return Err(StoreError::Backend(
                                    "malformed item: `v` is missing".to_owned(),
                                ));
                            }
                        };
                        is_live(exp, now_ms).then(|| Item {
                            key: op.key.clone(),
                            version,
                            value: Vec::new(),
                            expires_at_ms: exp,
                        })
                    }
                    None => None,
                };
                Ok(if condition_holds(op.condition, current.as_ref()) {
                    Outcome::Done
                } else {
                    Outcome::Failed(vec![0])
                })
            }
        }
    }

    /// The whole batch as one `TransactWriteItems` under the idempotency token `token` (the
    /// SDK resends the same token when it retries, and so does [`Self::apply`] while an attempt
    /// is in progress: an applied transaction is not applied twice and reports success).
    async fn transact(
        &self,
        pk: &str,
        ops: &[Op],
        now_ms: u64,
        token: &str,
    ) -> Result<Outcome, StoreError> {
        let mut items = Vec::with_capacity(ops.len());
        for op in ops {
            let mut e = Expr::default();
            let item = match &op.kind {
                Kind::Put { plan, live } if op.condition == Condition::Always && *live => {
                    let update = e.update(plan);
                    let condition = e.live(&plan.w, now_ms);
                    let update = Update::builder()
                        .table_name(self.table.clone())
                        .set_key(Some(key(pk, &op.sk)))
                        .update_expression(update)
                        .condition_expression(condition)
                        .set_expression_attribute_names(e.names())
                        .set_expression_attribute_values(e.values())
                        .build()
                        .map_err(|err| build_err("an update", err))?;
                    TransactWriteItem::builder().update(update).build()
                }
                Kind::Put { plan, .. } => {
                    let condition = match op.condition {
                        Condition::Always => Condition::Absent,
                        other => other,
                    };
                    let item = head_item(pk, &op.sk, put_version(op.condition)?, plan);
                    let put = Put::builder()
                        .table_name(self.table.clone())
                        .set_item(Some(item))
                        .set_condition_expression(e.condition(condition, now_ms))
                        .set_expression_attribute_names(e.names())
                        .set_expression_attribute_values(e.values())
                        .build()
                        .map_err(|err| build_err("a put", err))?;
                    TransactWriteItem::builder().put(put).build()
                }
                Kind::Delete => {
                    let delete = Delete::builder()
                        .table_name(self.table.clone())
                        .set_key(Some(key(pk, &op.sk)))
                        .set_condition_expression(e.condition(op.condition, now_ms))
                        .set_expression_attribute_names(e.names())
                        .set_expression_attribute_values(e.values())
                        .build()
                        .map_err(|err| build_err("a delete", err))?;
                    TransactWriteItem::builder().delete(delete).build()
                }
                Kind::Check => {
                    let check = ConditionCheck::builder()
                        .table_name(self.table.clone())
                        .set_key(Some(key(pk, &op.sk)))
                        .set_condition_expression(e.condition(op.condition, now_ms))
                        .set_expression_attribute_names(e.names())
                        .set_expression_attribute_values(e.values())
                        .build()
                        .map_err(|err| build_err("a condition check", err))?;
                    TransactWriteItem::builder().condition_check(check).build()
                }
            };
            items.push(item);
        }
        let result = self
            .client
            .transact_write_items()
            .set_transact_items(Some(items))
            .client_request_token(token)
            .send()
            .await;
        let err = match result {
            Ok(_) => return Ok(Outcome::Done),
            Err(err) => err,
        };
        let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
            err.as_service_error()
        else {
            return conflict_or("TransactWriteItems", err);
        };
        let reasons = cancelled.cancellation_reasons();
        let failed: Vec<usize> = reasons
            .iter()
            .enumerate()
            .filter(|(_, r)| r.code() == Some("ConditionalCheckFailed"))
            .map(|(p, _)| p)
            .filter(|&p| p < ops.len())
            .collect();
        if !failed.is_empty() {
            return Ok(Outcome::Failed(failed));
        }
        let codes: Vec<&str> = reasons
            .iter()
            .filter_map(|r| r.code())
            .filter(|&c| c != "None")
            .collect();
        let describe = || {
            format!(
                "TransactWriteItems cancelled: {} ({})",
                codes.join(", "),
                cancelled.message().unwrap_or_default()
            )
        };
        if codes.is_empty() || codes.iter().all(|c| transient_reason(c)) {
            return Ok(Outcome::Conflict(describe()));
        }
        let text = describe();
        match codes.iter().find(|c| !transient_reason(c)).copied() {
            None => Ok(Outcome::Conflict(text)),
            Some("ItemCollectionSizeLimitExceeded") => Err(StoreError::TooLarge(text)),
            Some("ValidationError") => {
                Err(classify("TransactWriteItems", "ValidationException", &text))
            }
            Some(_) => Err(StoreError::Backend(text)),
        }
    }

    /// Sleeps before attempt `n + 1`: 20 ms doubling, capped at 1 s, with jitter.
    pub(crate) async fn backoff(&self, n: u32) {
        let base = 20u64.saturating_mul(1 << n.min(6)).min(1_000);
        let jitter = codec::unique_id()
            .get(..4)
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .unwrap_or(0)
            % (base / 2 + 1);
        sleep(&self.client, Duration::from_millis(base / 2 + jitter)).await;
    }
}

/// Sleeps with the client's sleep implementation, or tokio's when the client has none (a
/// client built from `Config::builder()` gets its default only inside the SDK).
pub(crate) async fn sleep(client: &aws_sdk_dynamodb::Client, duration: Duration) {
    match client.config().sleep_impl() {
        Some(sleep) => sleep.sleep(duration).await,
        None => tokio::time::sleep(duration).await,
    }
}

/// A write that collided with a transaction in flight on the same item is tried again; any
/// other error is mapped.
fn conflict_or<E>(op: &str, err: SdkError<E, HttpResponse>) -> Result<Outcome, StoreError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match err.code() {
        Some(code @ "TransactionConflictException") => {
            Ok(Outcome::Conflict(format!("{op}: {code}")))
        }
        Some(code @ "TransactionInProgressException") => {
            Ok(Outcome::InProgress(format!("{op}: {code}")))
        }
        _ => Err(map_sdk(op, err)),
    }
}

/// A failed single put whose current item carries this put's write id was applied by an
/// earlier attempt of the same request (the SDK retried after losing the response).
fn self_applied(current: Option<&HashMap<String, AttributeValue>>, plan: &Plan) -> Outcome {
    if current.and_then(codec::w_of) == Some(plan.w.as_str()) {
        Outcome::Done
    } else {
        Outcome::Failed(vec![0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_expression_sets_and_removes() {
        let plan = Plan {
            w: "w1".to_owned(),
            packed: Packed {
                bytes: b"x".to_vec(),
                raw_len: None,
            },
            exp: Some(1_500),
            chunked: None,
        };
        let mut e = Expr::default();
        let update = e.update(&plan);
        assert_eq!(
            update,
            "SET #v = #v + :one, #w = :nw, #b = :nb, #exp = :nexp, #ttl = :nttl REMOVE #c, #h, #z"
        );
        assert_eq!(e.values.get(":nttl"), Some(&num(2)));
        let condition = e.live("w1", 7);
        assert!(condition.contains("#w <> :w"));
        assert_eq!(e.names.len(), 9, "{:?}", e.names);
    }

    #[test]
    fn conditions() {
        let mut e = Expr::default();
        assert_eq!(e.condition(Condition::Always, 1), None);
        assert_eq!(
            e.condition(Condition::Absent, 1).as_deref(),
            Some("attribute_not_exists(#pk) OR #exp <= :now")
        );
        assert_eq!(
            e.condition(Condition::Version(3), 1).as_deref(),
            Some("#v = :v AND (attribute_not_exists(#exp) OR #exp > :now)")
        );
    }
}
