//! Creating the table.

use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::create_table::CreateTableError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType, TableStatus,
    TimeToLiveSpecification, TimeToLiveStatus,
};
use handoff_core::StoreError;

use crate::codec::{PK, SK, TTL};
use crate::errors::map_sdk;

/// Polls of `DescribeTable` while a new table becomes active (about two minutes in all).
const ACTIVE_POLLS: u32 = 130;

fn build_err(err: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("building the table definition: {err}"))
}

/// See [`DynamoStore::create_table`](crate::DynamoStore::create_table).
pub(crate) async fn create_table(client: &Client, name: &str) -> Result<(), StoreError> {
    let attribute = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(build_err)
    };
    let key = |name: &str, key_type: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(key_type)
            .build()
            .map_err(build_err)
    };
    let created = client
        .create_table()
        .table_name(name)
        .attribute_definitions(attribute(PK)?)
        .attribute_definitions(attribute(SK)?)
        .key_schema(key(PK, KeyType::Hash)?)
        .key_schema(key(SK, KeyType::Range)?)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    match created {
        Ok(_) => {}
        Err(err)
            if matches!(
                err.as_service_error(),
                Some(CreateTableError::ResourceInUseException(_))
            ) => {}
        Err(err) => return Err(map_sdk("CreateTable", err)),
    }

    let mut polls = 0;
    loop {
        let table = client
            .describe_table()
            .table_name(name)
            .send()
            .await
            .map_err(|e| map_sdk("DescribeTable", e))?
            .table;
        if table.and_then(|t| t.table_status) == Some(TableStatus::Active) {
            break;
        }
        polls += 1;
        if polls > ACTIVE_POLLS {
            return Err(StoreError::Unavailable(format!(
                "table {name} did not become ACTIVE"
            )));
        }
        crate::write::sleep(
            client,
            Duration::from_millis(if polls < 10 { 100 } else { 1_000 }),
        )
        .await;
    }

    let ttl = client
        .describe_time_to_live()
        .table_name(name)
        .send()
        .await
        .map_err(|e| map_sdk("DescribeTimeToLive", e))?
        .time_to_live_description;
    let status = ttl.as_ref().and_then(|t| t.time_to_live_status.clone());
    let attribute = ttl.as_ref().and_then(|t| t.attribute_name.as_deref());
    let enabled = matches!(
        status,
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
    );
    if enabled && attribute == Some(TTL) {
        return Ok(());
    }
    if enabled {
        return Err(StoreError::Backend(format!(
            "table {name} has TTL on {attribute:?}, the store needs it on `{TTL}`"
        )));
    }
    client
        .update_time_to_live()
        .table_name(name)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .attribute_name(TTL)
                .enabled(true)
                .build()
                .map_err(build_err)?,
        )
        .send()
        .await
        .map_err(|e| map_sdk("UpdateTimeToLive", e))?;
    Ok(())
}
