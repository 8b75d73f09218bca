//! The store the environment names: DynamoDB (its client configured from Lambda's
//! environment, its table created only for local development), or a single-instance one.

use std::sync::Arc;

use handoff_core::Store;
use handoff_store_dynamodb::DynamoStore;

use super::tls::https_client;
use super::{Error, env, startup_mark};

/// The store the environment names: DynamoDB (`HANDOFF_TABLE`), or a local store
/// only with `HANDOFF_ALLOW_LOCAL_STORE=true`. Open it yourself when your agent
/// needs the store too, and pass it to [`Lambda::store`](super::Lambda::store).
pub async fn store_from_env() -> Result<Arc<dyn Store>, Error> {
    if store_kind(env)? == StoreKind::Memory {
        // Not through `handoff_host_native::store_from_env`: that would link SQLite into every
        // function for a store Lambda never uses.
        return Ok(Arc::new(
            handoff_core::store::memory::MemoryStore::from_lookup(env)?,
        ));
    }
    let table = env("HANDOFF_TABLE").ok_or("HANDOFF_TABLE is not set")?;
    let https = https_client(env, |path| std::fs::read(path))?;
    startup_mark("https client built");
    let client = aws_sdk_dynamodb::Client::from_conf(dynamodb_config(env, https)?);
    startup_mark("dynamodb client ready");
    if env("HANDOFF_CREATE_TABLE").as_deref() == Some("true") {
        create_local_table(&client, &table).await?;
    }
    Ok(Arc::new(DynamoStore::new(client, table)))
}

/// `HANDOFF_CREATE_TABLE=true` in a debug build (`cargo lambda watch`, `make dev-lambda`):
/// creates the table, for local development against moto.
#[cfg(debug_assertions)]
async fn create_local_table(client: &aws_sdk_dynamodb::Client, table: &str) -> Result<(), Error> {
    Ok(DynamoStore::create_table(client, table).await?)
}

/// A release build (what deploys) does not create tables: in AWS the SAM template owns the
/// table, and leaving `CreateTable`, `UpdateTable` and their table descriptions out keeps
/// about 100 KB (gzipped) of SDK code out of every bootstrap. Asking for it fails Init with
/// a clear error rather than serving against a table that may not exist.
#[cfg(not(debug_assertions))]
async fn create_local_table(_: &aws_sdk_dynamodb::Client, table: &str) -> Result<(), Error> {
    Err(format!(
        "HANDOFF_CREATE_TABLE=true: release builds do not create tables (that is for local \
         development, in debug builds such as `cargo lambda watch`); create `{table}` with \
         infra/template.yaml or infra/dynamodb-table.json, or unset HANDOFF_CREATE_TABLE"
    )
    .into())
}

/// The DynamoDB client's settings from what Lambda puts in every function's environment:
/// `AWS_REGION`, the execution role's `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
/// `AWS_SESSION_TOKEN`, and `AWS_ENDPOINT_URL_DYNAMODB` (or `AWS_ENDPOINT_URL`) for a local
/// endpoint. Read directly rather than through `aws-config`'s provider chain (profiles,
/// SSO, STS, IMDS), which a function never needs and which is a fifth of the bootstrap.
fn dynamodb_config(
    env: impl Fn(&str) -> Option<String>,
    http: aws_sdk_dynamodb::config::SharedHttpClient,
) -> Result<aws_sdk_dynamodb::Config, String> {
    use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
    let required = |key: &str| env(key).ok_or_else(|| format!("{key} is not set"));
    let region = env("AWS_REGION")
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .ok_or("AWS_REGION is not set")?;
    let credentials = Credentials::new(
        required("AWS_ACCESS_KEY_ID")?,
        required("AWS_SECRET_ACCESS_KEY")?,
        env("AWS_SESSION_TOKEN"),
        None,
        "lambda-environment",
    );
    let mut config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region))
        .credentials_provider(credentials)
        .http_client(http);
    if let Some(url) = env("AWS_ENDPOINT_URL_DYNAMODB").or_else(|| env("AWS_ENDPOINT_URL")) {
        config = config.endpoint_url(url);
    }
    Ok(config.build())
}

/// Where the function keeps its state.
#[derive(Debug, PartialEq, Eq)]
enum StoreKind {
    /// DynamoDB (`HANDOFF_TABLE`): shared by every instance.
    Dynamo,
    /// `HANDOFF_STORE=memory`: inside this instance only.
    Memory,
}

/// The store `HANDOFF_STORE` asks for. A local store is refused unless
/// `HANDOFF_ALLOW_LOCAL_STORE=true`: Lambda routes each request to any instance,
/// so a resume would miss the thread its interrupt was raised on.
fn store_kind(env: impl Fn(&str) -> Option<String>) -> Result<StoreKind, String> {
    let store = env("HANDOFF_STORE");
    let Some(local @ ("memory" | "sqlite")) = store.as_deref() else {
        return Ok(StoreKind::Dynamo);
    };
    if env("HANDOFF_ALLOW_LOCAL_STORE").as_deref() == Some("true") {
        return match local {
            "memory" => Ok(StoreKind::Memory),
            _ => Err(
                "HANDOFF_STORE=sqlite is not available on Lambda; use memory for a \
                      single-instance test"
                    .to_owned(),
            ),
        };
    }
    Err(format!(
        "HANDOFF_STORE={local} keeps state inside one Lambda instance, so a resume served by \
         another instance would not find its thread; use DynamoDB (unset HANDOFF_STORE, set \
         HANDOFF_TABLE), or set HANDOFF_ALLOW_LOCAL_STORE=true for a single-instance test"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lambda::test_env as env;

    #[test]
    fn dynamodb_unless_a_local_store_is_named() {
        assert_eq!(store_kind(env(&[])), Ok(StoreKind::Dynamo));
        let other = [("HANDOFF_STORE", "dynamodb")];
        assert_eq!(store_kind(env(&other)), Ok(StoreKind::Dynamo));
    }

    #[test]
    fn local_stores_are_refused_unless_allowed() {
        for local in ["memory", "sqlite"] {
            let err = store_kind(env(&[("HANDOFF_STORE", local)])).unwrap_err();
            assert!(err.contains(&format!("HANDOFF_STORE={local}")), "{err}");
            assert!(err.contains("HANDOFF_ALLOW_LOCAL_STORE=true"), "{err}");
            let not_true = [("HANDOFF_STORE", local), ("HANDOFF_ALLOW_LOCAL_STORE", "1")];
            assert!(store_kind(env(&not_true)).is_err());
            let allowed = [
                ("HANDOFF_STORE", local),
                ("HANDOFF_ALLOW_LOCAL_STORE", "true"),
            ];
            match local {
                "memory" => assert_eq!(store_kind(env(&allowed)), Ok(StoreKind::Memory)),
                _ => assert!(
                    store_kind(env(&allowed))
                        .unwrap_err()
                        .contains("not available")
                ),
            }
        }
    }

    #[test]
    fn the_dynamodb_client_is_configured_from_lambdas_environment() {
        let https = || {
            aws_smithy_http_client::Builder::new()
                .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                    aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
                ))
                .build_https()
        };
        let vars = [
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ACCESS_KEY_ID", "AKIA"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
        ];
        let config = dynamodb_config(env(&vars), https()).expect("a config");
        assert_eq!(config.region().map(|r| r.as_ref()), Some("eu-west-1"));
        let missing = dynamodb_config(env(&vars[..2]), https()).unwrap_err();
        assert_eq!(missing, "AWS_SECRET_ACCESS_KEY is not set");
        assert!(!missing.contains("AKIA"), "no credential in an error");
        let no_region = dynamodb_config(env(&vars[1..]), https()).unwrap_err();
        assert_eq!(no_region, "AWS_REGION is not set");
    }
}
