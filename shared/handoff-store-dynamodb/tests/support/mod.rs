//! A real `moto_server` for the tests: one per test binary, on a free port, each test on its
//! own table.
//!
//! moto_server serves each request on its own thread and its DynamoDB backend takes no lock:
//! a `TransactWriteItems` checks and applies its items one after another (and rolls back a
//! cancelled one by restoring a copy of the whole table), so concurrent requests interleave
//! inside it. Run unserialized, the conformance suite sees two winners of one `Absent` race
//! and `TransactGetItems` returning half of a transaction — moto bugs DynamoDB does not have.
//! Clients of a [`Moto`] therefore send it one request at a time ([`OneAtATime`]): the
//! store's concurrent callers still interleave at request granularity, which is where
//! DynamoDB linearizes them.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;
use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::AttributeValue;
use handoff_core::StoreError;
use handoff_store_conformance::BASE_MS;
use handoff_store_dynamodb::{DynamoOptions, DynamoStore};

/// A running `moto_server`, stopped (by PID) when dropped — and, for the shared one, which is
/// never dropped, when the test process exits: it runs under a small `sh` that kills it as
/// soon as its stdin (a pipe from this process) closes.
#[derive(Debug)]
pub struct Moto {
    wrapper: Child,
    stdin: Option<ChildStdin>,
    pid: u32,
    port: u16,
    log: PathBuf,
    lock: Arc<tokio::sync::Mutex<()>>,
}

/// An HTTP client that sends one request at a time (per lock): the next request leaves only
/// after the previous response's head arrived, i.e. after moto finished processing it.
///
/// It also injects [`Faults`].
#[derive(Debug, Clone)]
pub struct OneAtATime {
    inner: SharedHttpClient,
    lock: Arc<tokio::sync::Mutex<()>>,
    faults: Faults,
}

/// Faults a [`OneAtATime`] client injects, and what it saw.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// While above zero, each request is sent and processed, but its response is replaced by
    /// an I/O error (and `lose` decremented), as when a connection drops after DynamoDB
    /// applied a write; the SDK then retries the same request.
    pub lose: Arc<AtomicU64>,
    /// Responses (status, JSON body) served instead of moto's, in order: throttling,
    /// conflicts, server errors.
    pub canned: Arc<Mutex<VecDeque<(u16, String)>>>,
    /// The body of every request, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl Faults {
    /// Serves `responses` to the next requests.
    pub fn inject(&self, responses: impl IntoIterator<Item = (u16, String)>) {
        self.canned.lock().unwrap().extend(responses);
    }
}

/// A DynamoDB JSON error body.
pub fn error_body(code: &str, message: &str) -> String {
    format!(r#"{{"__type":"com.amazonaws.dynamodb.v20120810#{code}","message":"{message}"}}"#)
}

impl HttpClient for OneAtATime {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(OneAtATimeConnector {
            inner: self.inner.http_connector(settings, components),
            lock: Arc::clone(&self.lock),
            faults: self.faults.clone(),
        })
    }
}

#[derive(Debug)]
struct OneAtATimeConnector {
    inner: SharedHttpConnector,
    lock: Arc<tokio::sync::Mutex<()>>,
    faults: Faults,
}

impl HttpConnector for OneAtATimeConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let inner = self.inner.clone();
        let lock = Arc::clone(&self.lock);
        let lose = Arc::clone(&self.faults.lose);
        let body = request.body().bytes().unwrap_or_default();
        self.faults
            .requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(String::from_utf8_lossy(body).into_owned());
        let canned = self
            .faults
            .canned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front();
        if let Some((status, body)) = canned {
            let status = StatusCode::try_from(status).expect("a valid status code");
            let mut response = HttpResponse::new(status, SdkBody::from(body));
            response
                .headers_mut()
                .insert("content-type", "application/x-amz-json-1.0");
            return HttpConnectorFuture::ready(Ok(response));
        }
        HttpConnectorFuture::new(async move {
            let _turn = lock.lock().await;
            let response = inner.call(request).await?;
            let lost = lose
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if lost {
                return Err(ConnectorError::io(
                    "test: connection lost after the request".into(),
                ));
            }
            Ok(response)
        })
    }
}

/// How `moto_server` is found: `$MOTO_SERVER`, then the repository's `.venv` (`make setup`
/// installs it there from `requirements-dev.txt`), then `PATH`. Panics if none exists: the
/// DynamoDB tests never skip silently.
pub fn moto_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("MOTO_SERVER") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "MOTO_SERVER={} is not a file",
            path.display()
        );
        return path;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/moto_server");
    if venv.is_file() {
        return venv;
    }
    if let Some(path) = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("moto_server"))
        .find(|candidate| candidate.is_file())
    {
        return path;
    }
    panic!(
        "moto_server not found: the DynamoDB store tests need it. Run `make setup` (installs \
         moto[server] from requirements-dev.txt into .venv), or `pip install 'moto[server]'`, \
         or set MOTO_SERVER=/path/to/moto_server"
    );
}

/// A port nobody listens on right now (bound to port 0, then released).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

impl Moto {
    /// Starts a server and waits until it accepts connections.
    pub fn start() -> Self {
        let binary = moto_binary();
        let port = free_port();
        let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("moto-{port}.log"));
        // `$0` = moto_server, `$1` = port, `$2` = log file. Prints moto's PID, then waits for
        // EOF on stdin and kills it.
        let script = r#""$0" -H 127.0.0.1 -p "$1" </dev/null >"$2" 2>&1 &
m=$!
echo "$m"
read -r _ignored
kill "$m" 2>/dev/null
wait "$m" 2>/dev/null
rm -f "$2"
exit 0"#;
        let mut wrapper = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(&binary)
            .arg(port.to_string())
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {} through sh: {e}", binary.display()));
        let stdin = wrapper.stdin.take();
        let mut line = String::new();
        BufReader::new(wrapper.stdout.take().expect("wrapper stdout"))
            .read_line(&mut line)
            .expect("read moto_server's PID");
        let pid: u32 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("wrapper printed {line:?} instead of a PID"));
        let moto = Moto {
            wrapper,
            stdin,
            pid,
            port,
            log,
            lock: Arc::default(),
        };
        moto.wait_until_listening();
        moto
    }

    fn wait_until_listening(&self) {
        for _ in 0..600 {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if !Path::new(&format!("/proc/{}", self.pid)).exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        panic!(
            "moto_server (pid {}) did not listen on 127.0.0.1:{} within 30 s; its log:\n{log}",
            self.pid, self.port
        );
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A client of this server with static test credentials, sending one request at a time.
    pub fn client(&self) -> Client {
        self.client_with(RetryConfig::standard(), TimeoutConfig::disabled())
    }

    /// [`Self::client`] with explicit retry and timeout settings.
    pub fn client_with(&self, retry: RetryConfig, timeouts: TimeoutConfig) -> Client {
        self.client_faulty(retry, timeouts, Faults::default())
    }

    /// [`Self::client_with`] injecting `faults`.
    pub fn client_faulty(
        &self,
        retry: RetryConfig,
        timeouts: TimeoutConfig,
        faults: Faults,
    ) -> Client {
        let http = OneAtATime {
            inner: aws_smithy_http_client::Builder::new().build_http(),
            lock: Arc::clone(&self.lock),
            faults,
        };
        Client::from_conf(
            config(&self.endpoint(), retry, timeouts)
                .http_client(http)
                .build(),
        )
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.pid.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        drop(self.stdin.take());
        let _ = self.wrapper.wait();
    }
}

/// The server shared by every test of this binary.
pub fn moto() -> &'static Moto {
    static MOTO: OnceLock<Moto> = OnceLock::new();
    MOTO.get_or_init(Moto::start)
}

/// A client for `endpoint` (not a [`Moto`]: requests are not serialized) with explicit retry
/// and timeout settings.
pub fn client_with(endpoint: &str, retry: RetryConfig, timeouts: TimeoutConfig) -> Client {
    Client::from_conf(config(endpoint, retry, timeouts).build())
}

fn config(
    endpoint: &str,
    retry: RetryConfig,
    timeouts: TimeoutConfig,
) -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "static"))
        .endpoint_url(endpoint)
        .retry_config(retry)
        .timeout_config(timeouts)
}

/// A table name no other test uses.
pub fn table_name(label: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    format!(
        "handoff-{label}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// A store on a fresh table of the shared server.
pub async fn fresh_store() -> DynamoStore {
    fresh_store_with(DynamoOptions::default()).await
}

/// A store with `options` on a fresh table of the shared server.
pub async fn fresh_store_with(options: DynamoOptions) -> DynamoStore {
    let client = moto().client();
    let table = table_name("t");
    DynamoStore::create_table(&client, &table)
        .await
        .unwrap_or_else(|e| panic!("create table {table}: {e}"));
    DynamoStore::with_options(client, table, options)
}

// Shared by the test binaries that look at what the store sent and stored.

pub const NOW: u64 = BASE_MS;

pub fn unavailable<T>(result: &Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::Unavailable(_)))
}

/// Requests the store sent while `f` ran, per operation.
pub async fn calls<F: Future>(store: &DynamoStore, f: F) -> (F::Output, BTreeMap<String, u64>) {
    let before = store.call_counter().snapshot();
    let out = f.await;
    (out, store.call_counter().since(&before))
}

pub fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

/// Every item of the table's partition `pk`, internal ones included, by raw sort key.
pub async fn raw_items(
    store: &DynamoStore,
    pk: &str,
) -> BTreeMap<String, std::collections::HashMap<String, AttributeValue>> {
    let mut out = BTreeMap::new();
    let mut start = None;
    loop {
        let page = store
            .client()
            .query()
            .table_name(store.table_name())
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", AttributeValue::S(pk.to_owned()))
            .consistent_read(true)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .expect("raw query");
        for item in page.items.unwrap_or_default() {
            let Some(AttributeValue::S(sk)) = item.get("sk") else {
                panic!("item without sk")
            };
            out.insert(sk.clone(), item);
        }
        match page.last_evaluated_key {
            Some(last) if !last.is_empty() => start = Some(last),
            _ => return out,
        }
    }
}

pub async fn chunk_count(store: &DynamoStore, pk: &str) -> usize {
    raw_items(store, pk)
        .await
        .keys()
        .filter(|sk| sk.starts_with("~c#"))
        .count()
}
