//! One attempt as one `TransactWriteItems`, and what its cancellation reasons mean.

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{ConditionCheck, Delete, Put, TransactWriteItem, Update};
use handoff_core::{Condition, StoreError};

use crate::DynamoStore;
use crate::codec::key;
use crate::errors::{classify, transient_reason};

use super::expr::{Expr, build_err, head_item, put_version};
use super::plan::{Kind, Op};
use super::retry::{Outcome, conflict_or};

impl DynamoStore {
    /// The whole batch as one `TransactWriteItems` under the idempotency token `token` (the
    /// SDK resends the same token when it retries, and so does [`Self::apply`] while an attempt
    /// is in progress: an applied transaction is not applied twice and reports success).
    pub(super) async fn transact(
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
}
