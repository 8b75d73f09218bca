//! One attempt as one single-item call: `UpdateItem`, `PutItem`, `DeleteItem` or `GetItem`.

use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure};
use handoff_core::store::{condition_holds, is_live};
use handoff_core::{Condition, Item, StoreError};

use crate::DynamoStore;
use crate::codec::{self, EXP, V, key};
use crate::errors::map_sdk;

use super::expr::{Expr, head_item, put_version};
use super::plan::{Kind, Op};
use super::retry::{Outcome, conflict_or, self_applied};

impl DynamoStore {
    /// One write as one single-item call (half the write cost of a transaction).
    pub(super) async fn single(
        &self,
        pk: &str,
        op: &Op,
        now_ms: u64,
    ) -> Result<Outcome, StoreError> {
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
}
