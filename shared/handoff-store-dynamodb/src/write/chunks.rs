//! Chunk sets: written before the commit and deleted once garbage, with `BatchWriteItem`.

use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};
use futures::future::try_join_all;
use handoff_core::StoreError;

use crate::DynamoStore;
use crate::codec::{D, T, TTL, blob, key, num, ttl_seconds};
use crate::errors::map_sdk;
use crate::keys::chunk_sk;

use super::expr::build_err;
use super::plan::{Kind, Op};
use super::{BATCH_WRITE_ITEMS, MAX_BACKOFFS};

impl DynamoStore {
    /// Writes the chunks of every chunked value (plain puts: immutable, named by write id).
    pub(super) async fn write_chunks(
        &self,
        pk: &str,
        ops: &[Op],
        now_ms: u64,
    ) -> Result<(), StoreError> {
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
    pub(super) async fn delete_chunks(&self, pk: &str, sets: Vec<(String, u32)>, why: &str) {
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
}
