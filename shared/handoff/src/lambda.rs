//! The AWS Lambda host: your agent behind the Handoff router, streamed through
//! a Function URL with `InvokeMode: RESPONSE_STREAM`.
//!
//! [`run`] reads everything from the environment; [`Lambda`] sets any part
//! explicitly and falls back to the environment for the rest:
//!
//! | variable | default |
//! |---|---|
//! | `HANDOFF_TABLE` | required: the DynamoDB table (`HANDOFF_CREATE_TABLE=true` creates it in a debug build, for local development, and fails Init in a release build; `AWS_ENDPOINT_URL_DYNAMODB` points the SDK at moto) |
//! | `AWS_CA_BUNDLE` | unset: DynamoDB's certificate is checked against the platform's root certificates; a path to a PEM file: its certificates are trusted too (an endpoint behind a private CA, a TLS-intercepting proxy). A file that cannot be read, or holds no certificate or one that cannot be parsed, refuses to start, naming `AWS_CA_BUNDLE` |
//! | `HANDOFF_STORE` | DynamoDB; `memory` keeps state inside one instance, so it is refused unless `HANDOFF_ALLOW_LOCAL_STORE=true` (a single-instance test); `sqlite` is refused |
//! | `HANDOFF_BODY_LIMIT` | 6,000,000 (Lambda's own request limit is 6 MB) |
//! | `HANDOFF_KEEP_ALIVE_MS` | 15000 |
//! | `HANDOFF_LEASE_MS` | 15 min, capped by each invocation's deadline |
//! | `HANDOFF_STOP_POLL_MS` | 1000: how often a running run looks for a stop sent to another instance |
//! | `HANDOFF_LIVE_FLUSH_MS` | 250: how often a running run journals its events for reconnecting clients |
//! | `HANDOFF_COPILOTKIT_BASE` | `/copilotkit`: where the CopilotKit runtime protocol is served |
//! | `RUST_LOG` | `info`; `level` and `target=level` directives (comma-separated) |
//! | `HANDOFF_LOG` | `json`: JSON lines with the current spans' fields (run, thread, tenant); `text` |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | unset: no traces; set (feature `otel`): OTLP/HTTP export, flushed before each invocation ends, X-Ray's header the parent when sampled |
//!
//! Init opens the store's connection: after the store is built, [`Lambda::run`] reads one
//! key that never exists (a DynamoDB `GetItem`, which the function's role already may
//! do), so DNS, TCP and the TLS handshake happen during Init rather than in the first
//! request. A failure there (or no answer within 2 s) is logged as a warning and never
//! fails Init; the first request then connects as it would have.
//!
//! The invocation deadline becomes the engine's deadline: a run that would
//! outlive the function is stopped a few seconds before, closes what it opened
//! and ends with `RUN_FINISHED{cancelled}`, and its lease ends with the
//! invocation instead of blocking the thread.
//!
//! ```no_run
//! # use handoff::{Agent, AgentError, Finish, RunContext};
//! # struct MyAgent;
//! # #[handoff::async_trait]
//! # impl Agent for MyAgent {
//! #     async fn run(&self, _: &mut RunContext) -> Result<Finish, AgentError> { Ok(Finish::done()) }
//! # }
//! #[tokio::main]
//! async fn main() -> Result<(), handoff::lambda::Error> {
//!     handoff::lambda::run(MyAgent).await
//! }
//! ```

use std::sync::Arc;

use axum::Router;
use handoff_auth::IamCaller;
use handoff_core::{Agent, Clock, Runtime, Store};
use handoff_http::{Host, HostDeadline};
use handoff_store_dynamodb::DynamoStore;
pub use lambda_http::Error;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use tower::ServiceExt;

use crate::options::{HostOptions, host_setters, native_authenticator};

/// Serves `agent` with every setting from the environment (see the [module docs](self)).
pub async fn run(agent: impl Agent) -> Result<(), Error> {
    Lambda::new(agent).run().await
}

/// Serves plain `routes` in Lambda's default buffered mode (small JSON answers,
/// e.g. an A2A webhook), with the same logs.
pub async fn run_buffered(routes: Router) -> Result<(), Error> {
    init_logs();
    lambda_http::run(routes).await
}

/// JSON logs (`RUST_LOG`, default `info`; `HANDOFF_LOG=text` for text): one object per
/// line with the current span's fields; no timestamp, since CloudWatch stamps every line.
/// Traces over OTLP when an endpoint is set (feature `otel`), flushed before each
/// invocation ends. Does nothing if a subscriber is already installed.
pub fn init_logs() {
    match crate::telemetry::init(env, crate::telemetry::LogFormat::Json, false) {
        Ok(true) => startup_mark("logs ready"),
        Ok(false) => {}
        Err(error) => eprintln!("{error}"),
    }
}

/// A startup milestone at debug level on the `handoff::startup` target, stamped with
/// wall-clock microseconds, so a cold start can be broken down from outside
/// (`RUST_LOG=warn,handoff::startup=debug`; `make bench-lambda` does).
fn startup_mark(stage: &'static str) {
    tracing::debug!(target: "handoff::startup", unix_us = unix_us(), stage);
}

fn unix_us() -> u64 {
    #[allow(clippy::disallowed_methods)] // A log stamp, not engine time.
    let now = std::time::SystemTime::now();
    now.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Clock, ids, timers and a task spawner for tokio.
pub fn runtime() -> Runtime {
    handoff_native::runtime()
}

/// The store the environment names: DynamoDB (`HANDOFF_TABLE`), or a local store
/// only with `HANDOFF_ALLOW_LOCAL_STORE=true`. Open it yourself when your agent
/// needs the store too, and pass it to [`Lambda::store`].
pub async fn store_from_env() -> Result<Arc<dyn Store>, Error> {
    if store_kind(env)? == StoreKind::Memory {
        // Not through `handoff_native::store_from_env`: that would link SQLite into every
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

/// The SDK's HTTPS client: rustls on ring, the same crypto provider as the A2A client, so one
/// TLS stack is linked. It trusts the platform's root certificates and, when `AWS_CA_BUNDLE`
/// names a PEM file, that file's certificates too. Root certificates load when the SDK first
/// uses the client (the Init warm-up), not here; the bundle is read and checked here.
fn https_client(
    env: impl Fn(&str) -> Option<String>,
    read: impl Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<aws_sdk_dynamodb::config::SharedHttpClient, String> {
    use aws_smithy_http_client::tls;
    let builder = aws_smithy_http_client::Builder::new().tls_provider(tls::Provider::Rustls(
        tls::rustls_provider::CryptoMode::Ring,
    ));
    let Some(path) = env("AWS_CA_BUNDLE").filter(|path| !path.is_empty()) else {
        return Ok(builder.build_https());
    };
    let pem = read(&path)
        .map_err(|error| format!("AWS_CA_BUNDLE={path}: the CA bundle cannot be read ({error})"))?;
    check_ca_bundle(&pem).map_err(|error| format!("AWS_CA_BUNDLE={path}: {error}"))?;
    let trust = tls::TrustStore::default()
        .with_native_roots(true)
        .with_pem_certificate(pem);
    let context = tls::TlsContext::builder()
        .with_trust_store(trust)
        .build()
        .map_err(|error| format!("AWS_CA_BUNDLE={path}: {error}"))?;
    Ok(builder.tls_context(context).build_https())
}

/// Checks a PEM bundle the way the SDK's rustls connector reads it when it first connects
/// (where a section it cannot parse is a panic): every `CERTIFICATE` section must decode and
/// be a usable trust anchor, and there must be at least one.
fn check_ca_bundle(pem: &[u8]) -> Result<usize, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for (n, cert) in CertificateDer::pem_slice_iter(pem).enumerate() {
        let cert =
            cert.map_err(|error| format!("certificate {} is not valid PEM: {error}", n + 1))?;
        roots
            .add(cert)
            .map_err(|error| format!("certificate {} cannot be parsed: {error}", n + 1))?;
    }
    match roots.len() {
        0 => Err("the file holds no PEM certificate".to_owned()),
        n => Ok(n),
    }
}

/// How long Init waits for the warm-up read before serving anyway.
const WARM_UP_TIMEOUT_MS: u64 = 2_000;

/// Reads one key that never exists, so the store's connection (DNS, TCP, TLS) is in the
/// pool before the first invocation. Never fails: a store that does not answer is logged,
/// and the first request connects as it would have.
async fn warm_up(store: &dyn Store, now_ms: u64) {
    let read = store.get_one("handoff:warm-up", "connection", now_ms);
    let timeout = std::time::Duration::from_millis(WARM_UP_TIMEOUT_MS);
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(_)) => startup_mark("store connected"),
        Ok(Err(error)) => tracing::warn!(
            %error,
            "the store's warm-up read failed; the first request connects instead"
        ),
        Err(_) => tracing::warn!(
            timeout_ms = WARM_UP_TIMEOUT_MS,
            "the store's warm-up read did not answer in time; the first request connects instead"
        ),
    }
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

/// Everything [`run`] does, with each part settable.
pub struct Lambda {
    agent: Arc<dyn Agent>,
    store: Option<Arc<dyn Store>>,
    runtime: Option<Runtime>,
    options: HostOptions,
}

impl Lambda {
    /// A function serving `agent`; unset parts come from the environment.
    pub fn new(agent: impl Agent) -> Self {
        Lambda {
            agent: Arc::new(agent),
            store: None,
            runtime: None,
            options: HostOptions::default(),
        }
    }

    /// Keeps state in `store` instead of [`store_from_env`].
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// Uses `runtime` (clock, ids, timers) instead of [`runtime()`].
    pub fn runtime(mut self, runtime: Runtime) -> Self {
        self.runtime = Some(runtime);
        self
    }

    host_setters!("Lambda");

    /// Serves invocations until the runtime stops the function.
    pub async fn run(mut self) -> Result<(), Error> {
        if crate::telemetry::init(env, crate::telemetry::LogFormat::Json, false)? {
            startup_mark("logs ready");
        }
        // Before anything else: a function without HANDOFF_AUTH must not start at all.
        let authenticator = match self.options.authenticator.take() {
            Some(authenticator) => authenticator,
            None => native_authenticator(Host::Lambda)?,
        };
        if authenticator.scheme() == "none" {
            tracing::warn!("HANDOFF_AUTH=none: this function serves without authentication");
        }
        let store = match self.store {
            Some(store) => store,
            None => store_from_env().await?,
        };
        let runtime = self.runtime.unwrap_or_else(runtime);
        // Connect during Init, not in the first request (see the module docs).
        warm_up(store.as_ref(), runtime.clock.now_ms()).await;
        let engine = self
            .options
            .engine(Host::Lambda, self.agent, store, runtime, env);
        let app = self.options.app(Host::Lambda, engine, authenticator, env)?;

        // Lambda requests carry a `lambda_http::Body`; the router takes axum bodies and
        // the invocation deadline as an extension.
        let clock = handoff_native::SystemClock;
        let app = crate::telemetry::traced(app);
        let service = app.map_request(move |request: Request| {
            let deadline = request
                .lambda_context_ref()
                .map(|context| absolute_deadline(context.deadline, clock.now_ms()));
            let caller = iam_caller(&request);
            let request_id = request
                .lambda_context_ref()
                .map(|context| handoff_http::RequestId(context.request_id.clone()));
            #[cfg(feature = "otel")]
            let xray = request
                .lambda_context_ref()
                .and_then(|context| context.xray_trace_id.clone());
            let (mut parts, body) = request.into_parts();
            #[cfg(feature = "otel")]
            if let Some(xray) = xray {
                parts.extensions.insert(crate::telemetry::XRayHeader(xray));
            }
            parts.extensions.insert(HostDeadline(deadline));
            if let Some(request_id) = request_id {
                parts.extensions.insert(request_id);
            }
            if let Some(caller) = caller {
                parts.extensions.insert(caller);
            }
            axum::http::Request::from_parts(parts, axum::body::Body::from(body.to_vec()))
        });
        // The instance is frozen as soon as the response ends: its spans leave first.
        #[cfg(feature = "otel")]
        let service = service.map_response(|response: axum::response::Response| {
            match crate::telemetry::telemetry() {
                Some(telemetry) => response.map(|body| flushed_at_end(body, telemetry)),
                None => response,
            }
        });
        startup_mark("serving");
        lambda_http::run_with_streaming_response(service).await
    }
}

/// `body`, then a flush of the spans before the stream ends (the runs it streamed
/// close their spans just after their last event, so the flush waits for them briefly).
#[cfg(feature = "otel")]
fn flushed_at_end(
    body: axum::body::Body,
    telemetry: &'static handoff_native::telemetry::Telemetry,
) -> axum::body::Body {
    use futures::StreamExt;
    let flush = futures::stream::once(async move {
        telemetry.flush(std::time::Duration::from_millis(500)).await;
        None
    })
    .filter_map(futures::future::ready);
    axum::body::Body::from_stream(body.into_data_stream().chain(flush))
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// The caller AWS verified (SigV4) for a Function URL with `AuthType: AWS_IAM`.
fn iam_caller(request: &Request) -> Option<IamCaller> {
    let RequestContext::ApiGatewayV2(context) = request.request_context_ref()? else {
        return None;
    };
    let iam = context.authorizer.as_ref()?.iam.as_ref()?;
    Some(IamCaller {
        account_id: iam.account_id.clone()?,
        caller_arn: iam.user_arn.clone()?,
        user_id: iam.user_id.clone(),
    })
}

/// Lambda's deadline is Unix milliseconds. The local emulator (`cargo lambda
/// watch`) sends the timeout itself (e.g. 600000); a value that small cannot be an
/// instant in this century, so it is read as "this many ms from now".
fn absolute_deadline(raw: u64, now_ms: u64) -> u64 {
    const YEAR_2001_MS: u64 = 978_307_200_000;
    if raw < YEAR_2001_MS {
        now_ms.saturating_add(raw)
    } else {
        raw
    }
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

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    }

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
    fn the_emulators_relative_deadline_becomes_absolute() {
        assert_eq!(
            absolute_deadline(600_000, 1_800_000_000_000),
            1_800_000_600_000
        );
        assert_eq!(
            absolute_deadline(1_800_000_900_000, 1_800_000_000_000),
            1_800_000_900_000
        );
    }

    /// A Function URL invocation (payload 2.0) as AWS sends it for `AuthType: AWS_IAM`.
    fn function_url_event(authorizer: &str) -> String {
        format!(
            r#"{{"version":"2.0","routeKey":"$default","rawPath":"/agent","rawQueryString":"",
            "headers":{{"host":"abc.lambda-url.us-east-1.on.aws","content-type":"application/json"}},
            "requestContext":{{"accountId":"123456789012","apiId":"abc","domainName":"abc.lambda-url.us-east-1.on.aws",
              "domainPrefix":"abc","http":{{"method":"POST","path":"/agent","protocol":"HTTP/1.1",
              "sourceIp":"203.0.113.7","userAgent":"test"}},"requestId":"r-1","routeKey":"$default",
              "stage":"$default","time":"01/Dec/2026:10:00:00 +0000","timeEpoch":1795000000000{authorizer}}},
            "body":"{{}}","isBase64Encoded":false}}"#
        )
    }

    #[test]
    fn an_iam_function_url_call_names_its_caller() {
        let event = function_url_event(
            r#","authorizer":{"iam":{"accessKey":"AKIAEXAMPLE","accountId":"210987654321",
            "callerId":"AROAEXAMPLE:ci","cognitoIdentity":null,"principalOrgId":null,
            "userArn":"arn:aws:sts::210987654321:assumed-role/ci/session","userId":"AROAEXAMPLE:ci"}}"#,
        );
        let request = lambda_http::request::from_str(&event).expect("a Function URL event");
        let caller = iam_caller(&request).expect("the IAM caller");
        assert_eq!(caller.account_id, "210987654321");
        assert_eq!(
            caller.caller_arn,
            "arn:aws:sts::210987654321:assumed-role/ci/session"
        );
        assert_eq!(caller.user_id.as_deref(), Some("AROAEXAMPLE:ci"));
    }

    #[test]
    fn an_unsigned_function_url_call_has_no_caller() {
        let request = lambda_http::request::from_str(&function_url_event("")).unwrap();
        assert_eq!(iam_caller(&request), None);
    }

    /// A self-signed CA certificate (EC P-256; its key was thrown away).
    const TEST_CA: &str = "-----BEGIN CERTIFICATE-----\n\
MIIBlDCCATugAwIBAgIUab0LwxFooho+eGJdFWBUxUdh46AwCgYIKoZIzj0EAwIw\n\
HzEdMBsGA1UEAwwUaGFuZG9mZiB1bml0LXRlc3QgQ0EwIBcNMjYxMjA1MTI0NDIz\n\
WhgPMjEyNjExMTExMjQ0MjNaMB8xHTAbBgNVBAMMFGhhbmRvZmYgdW5pdC10ZXN0\n\
IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEXM8IRUken0JFltDE2OSSAOcW\n\
ffPsiwbY4FHzyHb+XvBjGk4sdFbv4rlhcpRZqToTS68IC2NG0LpFODjtU4jMOqNT\n\
MFEwHQYDVR0OBBYEFN0Ulo7wyyKyIhFBvkHgx9vrsFRNMB8GA1UdIwQYMBaAFN0U\n\
lo7wyyKyIhFBvkHgx9vrsFRNMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID\n\
RwAwRAIgL9NxhwpScYu0oJdb3U5PCYesHI35keRR7LvwF2ujiSsCIGoj23V3Q1sG\n\
Uev2DmSha6K2B/orvzrPRPSJXEsPxQ3g\n\
-----END CERTIFICATE-----\n\
";

    #[test]
    fn aws_ca_bundle_is_read_and_checked_before_the_function_starts() {
        let read = |contents: &'static str| {
            move |path: &str| match path {
                "/bundle.pem" => Ok(contents.as_bytes().to_vec()),
                _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            }
        };
        // Unset or empty: the platform's roots only, nothing read.
        assert!(https_client(env(&[]), read("")).is_ok());
        assert!(https_client(env(&[("AWS_CA_BUNDLE", "")]), read("")).is_ok());
        let bundle = [("AWS_CA_BUNDLE", "/bundle.pem")];
        assert!(https_client(env(&bundle), read(TEST_CA)).is_ok());
        let two = format!("# a comment\n{TEST_CA}\n{TEST_CA}");
        assert_eq!(
            check_ca_bundle(two.as_bytes()),
            Ok(2),
            "comments between sections"
        );

        let missing = [("AWS_CA_BUNDLE", "/nowhere.pem")];
        let err = https_client(env(&missing), read(TEST_CA)).unwrap_err();
        assert!(err.starts_with("AWS_CA_BUNDLE=/nowhere.pem: "), "{err}");
        assert!(err.contains("cannot be read"), "{err}");
        for bad in [
            "",
            "not a certificate",
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n",
            "-----BEGIN CERTIFICATE-----\nMIIB\n",
        ] {
            let err = https_client(env(&bundle), read(bad)).unwrap_err();
            assert!(
                err.starts_with("AWS_CA_BUNDLE=/bundle.pem: "),
                "{bad:?}: {err}"
            );
        }
    }

    #[tokio::test]
    async fn the_warm_up_read_never_fails_init() {
        struct Down;
        #[async_trait::async_trait]
        impl Store for Down {
            async fn get(
                &self,
                _: &str,
                _: &[&str],
                _: u64,
            ) -> Result<Vec<Option<handoff_core::Item>>, handoff_core::StoreError> {
                Err(handoff_core::StoreError::Unavailable("down".to_owned()))
            }
            async fn commit(
                &self,
                _: &str,
                _: Vec<handoff_core::store::Write>,
                _: u64,
            ) -> Result<(), handoff_core::StoreError> {
                unreachable!("the warm-up only reads")
            }
            async fn list(
                &self,
                _: &str,
                _: &str,
                _: u64,
            ) -> Result<Vec<String>, handoff_core::StoreError> {
                unreachable!("the warm-up only reads")
            }
        }
        warm_up(&Down, 0).await;
        let memory = handoff_core::store::memory::MemoryStore::new();
        warm_up(&memory, 0).await;
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
