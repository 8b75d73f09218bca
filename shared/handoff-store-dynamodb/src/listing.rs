//! `list_index`: a `Query` of the `listing` global secondary index.
//!
//! Heads put with an `IndexEntry` carry `ls` (the scope) and `lo` (rank descending, then
//! partition and key, as one ascending string: [`keys::order`]); the index keys on them and
//! projects `exp`, so a page is one ascending `Query` on `ls = :scope AND lo > :after`,
//! skipping expired items, repeated only while expired items (or DynamoDB's 1 MB pages) leave
//! the page short.

use std::collections::HashMap;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::AttributeValue;
use handoff_core::store::is_live;
use handoff_core::{IndexHit, StoreError};

use crate::DynamoStore;
use crate::codec::{self, EXP, LISTING_INDEX, LO, LS, PK, SK, num, s};
use crate::errors::map_sdk;
use crate::keys::{self, MAX_INDEX_PK_BYTES, MAX_INDEX_SK_BYTES, decode};

type RawItem = HashMap<String, AttributeValue>;

fn bad(what: &str) -> StoreError {
    StoreError::Backend(format!("malformed `{LISTING_INDEX}` index entry: {what}"))
}

fn string<'a>(item: &'a RawItem, name: &str) -> Result<&'a str, StoreError> {
    match item.get(name) {
        Some(AttributeValue::S(value)) => Ok(value),
        _ => Err(bad(&format!("`{name}` is not a string"))),
    }
}

/// The hit an index entry points at.
fn hit(item: &RawItem) -> Result<IndexHit, StoreError> {
    let lo = string(item, LO)?;
    let rank = keys::rank_of(lo).ok_or_else(|| bad(&format!("`{LO}` = {lo:?}")))?;
    let pk = string(item, PK)?;
    let sk = string(item, SK)?;
    let partition = decode(pk).ok_or_else(|| bad(&format!("`{PK}` = {pk:?}")))?;
    let key = decode(sk).ok_or_else(|| bad(&format!("`{SK}` = {sk:?}")))?;
    Ok(IndexHit {
        rank,
        partition: partition.to_owned(),
        key: key.to_owned(),
    })
}

/// Whether a failed `Query` names the index as missing or unusable: DynamoDB answers
/// `ValidationException` ("The table does not have the specified index", or a backfilling
/// index), moto `ResourceNotFoundException` ("Invalid index").
fn missing_index(err: &impl ProvideErrorMetadata) -> bool {
    let mentions_index = err
        .message()
        .is_some_and(|m| m.to_ascii_lowercase().contains("index"));
    matches!(
        err.code(),
        Some("ValidationException" | "ResourceNotFoundException")
    ) && mentions_index
}

impl DynamoStore {
    pub(crate) async fn list_index_impl(
        &self,
        scope: &str,
        after: Option<&IndexHit>,
        limit: usize,
        now_ms: u64,
    ) -> Result<Vec<IndexHit>, StoreError> {
        let ls = keys::scope(scope);
        if limit == 0 || ls.len() > MAX_INDEX_PK_BYTES {
            // Nothing can be listed under a scope too long for the index.
            return Ok(Vec::new());
        }
        let mut names = HashMap::from([
            ("#ls".to_owned(), LS.to_owned()),
            ("#exp".to_owned(), EXP.to_owned()),
        ]);
        let mut values =
            HashMap::from([(":ls".to_owned(), s(ls)), (":now".to_owned(), num(now_ms))]);
        let key_condition = match after {
            Some(after) => {
                // Every `lo` written fits the index; a longer `after` (not from this store)
                // starts at its longest prefix that does, and the hits up to it are dropped
                // below.
                let lo = keys::order(after.rank, &after.partition, &after.key);
                names.insert("#lo".to_owned(), LO.to_owned());
                values.insert(
                    ":after".to_owned(),
                    s(keys::truncate(&lo, MAX_INDEX_SK_BYTES)),
                );
                "#ls = :ls AND #lo > :after"
            }
            None => "#ls = :ls",
        };

        let mut hits = Vec::new();
        let mut start: Option<RawItem> = None;
        loop {
            let page = i32::try_from(limit - hits.len()).unwrap_or(i32::MAX);
            let result = self
                .client
                .query()
                .table_name(self.table.clone())
                .index_name(LISTING_INDEX)
                .key_condition_expression(key_condition)
                .filter_expression("attribute_not_exists(#exp) OR #exp > :now")
                .set_expression_attribute_names(Some(names.clone()))
                .set_expression_attribute_values(Some(values.clone()))
                .set_exclusive_start_key(start.take())
                .limit(page)
                .send()
                .await;
            let output = match result {
                Ok(output) => output,
                Err(err) if missing_index(&err) => {
                    // No such index (or one still backfilling): say which index is needed.
                    return Err(StoreError::Backend(format!(
                        "list_index needs the global secondary index `{LISTING_INDEX}` on table \
                         `{}` (`{LS}` S hash, `{LO}` S range, projecting `{EXP}`; \
                         DynamoStore::create_table adds it): {}",
                        self.table,
                        map_sdk("Query", err)
                    )));
                }
                Err(err) => return Err(map_sdk("Query", err)),
            };
            for item in output.items.unwrap_or_default() {
                if !is_live(codec::exp_of(&item), now_ms) {
                    continue;
                }
                let hit = hit(&item)?;
                if after.is_some_and(|after| !hit.follows(after)) {
                    continue;
                }
                hits.push(hit);
                if hits.len() == limit {
                    return Ok(hits);
                }
            }
            match output.last_evaluated_key {
                Some(last) if !last.is_empty() => start = Some(last),
                _ => return Ok(hits),
            }
        }
    }
}
