//! `DynamoStore::create_table` on a real `moto_server`, and the table `infra/` deploys.

mod support;

use handoff_store_dynamodb::DynamoStore;
use support::{moto, table_name};

#[tokio::test]
async fn create_table_is_idempotent_and_enables_ttl() {
    let client = moto().client();
    let table = table_name("create");
    DynamoStore::create_table(&client, &table).await.unwrap();
    DynamoStore::create_table(&client, &table).await.unwrap();
    let ttl = client
        .describe_time_to_live()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .time_to_live_description
        .unwrap();
    assert_eq!(ttl.attribute_name.as_deref(), Some("ttl"));
    let description = client
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    let keys: Vec<(String, String)> = description
        .key_schema()
        .iter()
        .map(|k| {
            (
                k.attribute_name().to_owned(),
                k.key_type().as_str().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("pk".to_owned(), "HASH".to_owned()),
            ("sk".to_owned(), "RANGE".to_owned())
        ]
    );
    let [index] = description.global_secondary_indexes() else {
        panic!("one global secondary index: {description:?}")
    };
    assert_eq!(index.index_name(), Some("listing"));
    let keys: Vec<(&str, &str)> = index
        .key_schema()
        .iter()
        .map(|k| (k.attribute_name(), k.key_type().as_str()))
        .collect();
    assert_eq!(keys, [("ls", "HASH"), ("lo", "RANGE")]);
    let projection = index.projection().unwrap();
    assert_eq!(
        projection.projection_type().map(|p| p.as_str()),
        Some("INCLUDE")
    );
    assert_eq!(projection.non_key_attributes(), ["exp"]);
}

/// The JSON in `infra/` describes the table `create_table` makes.
#[test]
fn infra_table_definition_matches() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../infra/dynamodb-table.json"
    );
    let text = std::fs::read_to_string(path).expect("infra/dynamodb-table.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(json["BillingMode"], "PAY_PER_REQUEST");
    assert_eq!(
        json["KeySchema"],
        serde_json::json!([{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}])
    );
    assert_eq!(
        json["AttributeDefinitions"],
        serde_json::json!([
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "ls", "AttributeType": "S"},
            {"AttributeName": "lo", "AttributeType": "S"}
        ])
    );
    assert_eq!(
        json["GlobalSecondaryIndexes"],
        serde_json::json!([{
            "IndexName": "listing",
            "KeySchema": [
                {"AttributeName": "ls", "KeyType": "HASH"},
                {"AttributeName": "lo", "KeyType": "RANGE"}
            ],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["exp"]}
        }])
    );
    // The SAM template declares the same table (checked as text: no YAML parser here).
    let template = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../infra/template.yaml"
    ))
    .expect("infra/template.yaml");
    for needle in [
        "AttributeName: ls",
        "AttributeName: lo",
        "IndexName: listing",
        "ProjectionType: INCLUDE",
        "NonKeyAttributes: [exp]",
    ] {
        assert!(template.contains(needle), "template.yaml lacks {needle:?}");
    }
}
