//! Creating the table.

use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::create_table::CreateTableError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex,
    GlobalSecondaryIndexUpdate, IndexStatus, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, TableDescription, TableStatus, TimeToLiveSpecification, TimeToLiveStatus,
};
use handoff_core::StoreError;

use crate::codec::{EXP, LISTING_INDEX, LO, LS, PK, SK, TTL};
use crate::errors::map_sdk;

/// Polls of `DescribeTable` while a new table or index becomes active (about two minutes in
/// all).
const ACTIVE_POLLS: u32 = 130;

fn build_err(err: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("building the table definition: {err}"))
}

/// `pk`, `sk`, `ls` and `lo`, all strings: every key attribute of the table and its index.
fn attributes() -> Result<Vec<AttributeDefinition>, StoreError> {
    [PK, SK, LS, LO]
        .into_iter()
        .map(|name| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .map_err(build_err)
        })
        .collect()
}

fn key(name: &str, key_type: KeyType) -> Result<KeySchemaElement, StoreError> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .map_err(build_err)
}

/// The `listing` index: `ls` hash, `lo` range, projecting `exp` besides the keys.
fn listing_keys() -> Result<(Vec<KeySchemaElement>, Projection), StoreError> {
    let keys = vec![key(LS, KeyType::Hash)?, key(LO, KeyType::Range)?];
    let projection = Projection::builder()
        .projection_type(ProjectionType::Include)
        .non_key_attributes(EXP)
        .build();
    Ok((keys, projection))
}

/// Whether the table's `listing` index exists (`Err` if it exists but cannot serve
/// `list_index`), and whether it is active.
fn listing_state(name: &str, table: &TableDescription) -> Result<Option<bool>, StoreError> {
    let Some(index) = table
        .global_secondary_indexes()
        .iter()
        .find(|index| index.index_name() == Some(LISTING_INDEX))
    else {
        return Ok(None);
    };
    let keys: Vec<(&str, &KeyType)> = index
        .key_schema()
        .iter()
        .map(|k| (k.attribute_name(), k.key_type()))
        .collect();
    let projection = index.projection();
    let projects_exp = match projection.and_then(|p| p.projection_type()) {
        Some(ProjectionType::All) => true,
        Some(ProjectionType::Include) => projection
            .map(|p| p.non_key_attributes())
            .is_some_and(|attributes| attributes.iter().any(|a| a == EXP)),
        _ => false,
    };
    if keys != [(LS, &KeyType::Hash), (LO, &KeyType::Range)] || !projects_exp {
        return Err(StoreError::Backend(format!(
            "table {name} has an index `{LISTING_INDEX}` with keys {keys:?}; the store needs \
             `{LS}` (hash) and `{LO}` (range), projecting `{EXP}`"
        )));
    }
    Ok(Some(matches!(
        index.index_status(),
        Some(IndexStatus::Active) | None
    )))
}

/// Polls `DescribeTable` until the table is `ACTIVE` and `done` says so.
async fn wait(
    client: &Client,
    name: &str,
    what: &str,
    done: impl Fn(&TableDescription) -> Result<bool, StoreError>,
) -> Result<TableDescription, StoreError> {
    let mut polls = 0;
    loop {
        let table = client
            .describe_table()
            .table_name(name)
            .send()
            .await
            .map_err(|e| map_sdk("DescribeTable", e))?
            .table;
        if let Some(table) = table
            && table.table_status() == Some(&TableStatus::Active)
            && done(&table)?
        {
            return Ok(table);
        }
        polls += 1;
        if polls > ACTIVE_POLLS {
            return Err(StoreError::Unavailable(format!(
                "table {name}: {what} did not become ACTIVE"
            )));
        }
        crate::write::sleep(
            client,
            Duration::from_millis(if polls < 10 { 100 } else { 1_000 }),
        )
        .await;
    }
}

/// See [`DynamoStore::create_table`](crate::DynamoStore::create_table).
pub(crate) async fn create_table(client: &Client, name: &str) -> Result<(), StoreError> {
    let (index_keys, projection) = listing_keys()?;
    let index = GlobalSecondaryIndex::builder()
        .index_name(LISTING_INDEX)
        .set_key_schema(Some(index_keys.clone()))
        .projection(projection.clone())
        .build()
        .map_err(build_err)?;
    let created = client
        .create_table()
        .table_name(name)
        .set_attribute_definitions(Some(attributes()?))
        .key_schema(key(PK, KeyType::Hash)?)
        .key_schema(key(SK, KeyType::Range)?)
        .global_secondary_indexes(index)
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

    // An existing table may lack the index (created before listings): add it. An index
    // being built (backfilled) is waited for like a new one.
    let table = wait(client, name, "the table", |_| Ok(true)).await?;
    if listing_state(name, &table)?.is_none() {
        let create = CreateGlobalSecondaryIndexAction::builder()
            .index_name(LISTING_INDEX)
            .set_key_schema(Some(index_keys))
            .projection(projection)
            .build()
            .map_err(build_err)?;
        let added = client
            .update_table()
            .table_name(name)
            .set_attribute_definitions(Some(attributes()?))
            .global_secondary_index_updates(
                GlobalSecondaryIndexUpdate::builder().create(create).build(),
            )
            .send()
            .await;
        match added {
            Ok(_) => {}
            // Another process added it (or is adding it) meanwhile.
            Err(err) if err.code() == Some("ResourceInUseException") => {}
            Err(err) => return Err(map_sdk("UpdateTable", err)),
        }
    }
    let index = format!("its index `{LISTING_INDEX}`");
    wait(client, name, &index, |table| {
        Ok(listing_state(name, table)? == Some(true))
    })
    .await?;

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
