//! What DynamoDB bills for the requests a client sends: an SDK interceptor that adds up
//! request units by DynamoDB's on-demand rules, for `make bench`'s DynamoDB window.
//!
//! Rules (DynamoDB developer guide, "Read/write capacity mode"): a write costs one write
//! request unit per KB of the item (rounded up), a strongly consistent read one read unit per
//! 4 KB (a `Query` per 4 KB of all the items it returns together); a transactional request
//! costs two units per item (`TransactWriteItems`, condition checks included, and
//! `TransactGetItems`). A conditional write that fails its condition is billed as a write.
//!
//! Item sizes are estimated from the request (writes) or the response (reads) as DynamoDB
//! counts them: attribute names plus values. An update is billed on the larger of the item
//! before and after it; the estimate counts the key and the values it sets, so it can only
//! be low for updates of large items (the window's updates are small heads).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use aws_sdk_dynamodb::config::interceptors::{
    AfterDeserializationInterceptorContextRef, BeforeSerializationInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput;
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemInput;
use aws_sdk_dynamodb::operation::delete_item::DeleteItemInput;
use aws_sdk_dynamodb::operation::get_item::GetItemOutput;
use aws_sdk_dynamodb::operation::put_item::PutItemInput;
use aws_sdk_dynamodb::operation::query::QueryOutput;
use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsOutput;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
use aws_sdk_dynamodb::types::AttributeValue;

/// On-demand prices, US East (N. Virginia), Standard table class, from AWS's DynamoDB
/// pricing page as it stood before the November 2024 reduction (which halved both): US$ per
/// million write request units and per million read request units.
pub const USD_PER_MILLION_WRITE_UNITS: f64 = 1.25;
/// See [`USD_PER_MILLION_WRITE_UNITS`].
pub const USD_PER_MILLION_READ_UNITS: f64 = 0.25;

/// Request units billed so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Units {
    /// Write request units.
    pub write: u64,
    /// Read request units.
    pub read: u64,
}

impl Units {
    /// What these units cost, in US$, at [`USD_PER_MILLION_WRITE_UNITS`] and
    /// [`USD_PER_MILLION_READ_UNITS`].
    pub fn usd(self) -> f64 {
        (self.write as f64 * USD_PER_MILLION_WRITE_UNITS
            + self.read as f64 * USD_PER_MILLION_READ_UNITS)
            / 1e6
    }

    /// `self - earlier`.
    pub fn since(self, earlier: Units) -> Units {
        Units {
            write: self.write - earlier.write,
            read: self.read - earlier.read,
        }
    }
}

/// The interceptor: add it to a client's config (`Config::builder().interceptor(bill.clone())`);
/// clones share the total.
#[derive(Debug, Clone, Default)]
pub struct Bill {
    units: Arc<Mutex<Units>>,
}

type RawItem = HashMap<String, AttributeValue>;

const KB: u64 = 1024;

fn value_size(value: &AttributeValue) -> u64 {
    match value {
        AttributeValue::S(s) => s.len() as u64,
        AttributeValue::B(b) => b.as_ref().len() as u64,
        // Numbers: about one byte per two significant digits, plus one.
        AttributeValue::N(n) => n.len().div_ceil(2) as u64 + 1,
        AttributeValue::Ss(v) => v.iter().map(|s| s.len() as u64).sum(),
        AttributeValue::Ns(v) => v.iter().map(|n| n.len().div_ceil(2) as u64 + 1).sum(),
        AttributeValue::Bs(v) => v.iter().map(|b| b.as_ref().len() as u64).sum(),
        AttributeValue::M(m) => 3 + item_size(m),
        AttributeValue::L(l) => 3 + l.iter().map(|v| 1 + value_size(v)).sum::<u64>(),
        _ => 1,
    }
}

fn item_size(item: &RawItem) -> u64 {
    item.iter()
        .map(|(name, value)| name.len() as u64 + value_size(value))
        .sum()
}

fn values_size(values: Option<&RawItem>) -> u64 {
    values.map_or(0, |v| v.values().map(value_size).sum())
}

fn write_units(bytes: u64) -> u64 {
    bytes.div_ceil(KB).max(1)
}

fn read_units(bytes: u64) -> u64 {
    bytes.div_ceil(4 * KB).max(1)
}

impl Bill {
    /// A bill at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Units billed so far.
    pub fn units(&self) -> Units {
        *self.units.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, write: u64, read: u64) {
        let mut units = self.units.lock().unwrap_or_else(PoisonError::into_inner);
        units.write += write;
        units.read += read;
    }
}

fn transact_write_units(input: &TransactWriteItemsInput) -> u64 {
    input
        .transact_items()
        .iter()
        .map(|item| {
            let bytes = if let Some(put) = item.put() {
                item_size(put.item())
            } else if let Some(update) = item.update() {
                item_size(update.key()) + values_size(update.expression_attribute_values())
            } else if let Some(delete) = item.delete() {
                item_size(delete.key())
            } else {
                item.condition_check().map_or(0, |c| item_size(c.key()))
            };
            2 * write_units(bytes)
        })
        .sum()
}

impl Intercept for Bill {
    fn name(&self) -> &'static str {
        "HandoffBenchBill"
    }

    fn read_before_serialization(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let input = context.input();
        let write = if let Some(put) = input.downcast_ref::<PutItemInput>() {
            write_units(put.item().map_or(0, item_size))
        } else if let Some(update) = input.downcast_ref::<UpdateItemInput>() {
            write_units(
                update.key().map_or(0, item_size)
                    + values_size(update.expression_attribute_values()),
            )
        } else if let Some(delete) = input.downcast_ref::<DeleteItemInput>() {
            write_units(delete.key().map_or(0, item_size))
        } else if let Some(transact) = input.downcast_ref::<TransactWriteItemsInput>() {
            transact_write_units(transact)
        } else if let Some(batch) = input.downcast_ref::<BatchWriteItemInput>() {
            batch
                .request_items()
                .map(|tables| {
                    tables
                        .values()
                        .flatten()
                        .map(|request| {
                            let put = request.put_request().map(|p| item_size(p.item()));
                            let delete = request.delete_request().map(|d| item_size(d.key()));
                            write_units(put.or(delete).unwrap_or(0))
                        })
                        .sum()
                })
                .unwrap_or(0)
        } else {
            0
        };
        self.add(write, 0);
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        context: &AfterDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Ok(output) = context.output_or_error() else {
            return Ok(());
        };
        let read = if let Some(get) = output.downcast_ref::<GetItemOutput>() {
            read_units(get.item().map_or(0, item_size))
        } else if let Some(transact) = output.downcast_ref::<TransactGetItemsOutput>() {
            transact
                .responses()
                .iter()
                .map(|r| 2 * read_units(r.item().map_or(0, item_size)))
                .sum()
        } else if let Some(query) = output.downcast_ref::<QueryOutput>() {
            read_units(query.items().iter().map(item_size).sum())
        } else if let Some(batch) = output.downcast_ref::<BatchGetItemOutput>() {
            batch
                .responses()
                .map(|tables| {
                    tables
                        .values()
                        .flatten()
                        .map(|item| read_units(item_size(item)))
                        .sum()
                })
                .unwrap_or(0)
        } else {
            0
        };
        self.add(0, read);
        Ok(())
    }
}
