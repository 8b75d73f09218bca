//! The native host: your agent behind the Handoff router on tokio + axum.
//!
//! [`serve`] reads everything from the environment; [`Server`] sets any part
//! explicitly and falls back to the environment for the rest:
//!
//! | variable | default |
//! |---|---|
//! | `PORT` | 8080 (`0` picks a free port); the server binds 127.0.0.1 |
//! | `HANDOFF_STORE` | `sqlite`: the embedded store in `HANDOFF_DATA_DIR` (default `.handoff`); `memory` keeps state in the process |
//! | `HANDOFF_SQLITE_SYNC` | `full`: a commit survives a power loss; `normal` (WAL, `synchronous=NORMAL`) survives a crash of the process, not a power loss, and commits faster |
//! | `HANDOFF_BODY_LIMIT` | 8 MiB |
//! | `HANDOFF_KEEP_ALIVE_MS` | 15000 |
//! | `HANDOFF_LEASE_MS` | 15 min |
//! | `HANDOFF_STOP_POLL_MS` | 1000: how often a running run looks for a stop sent to another instance |
//! | `HANDOFF_LIVE_FLUSH_MS` | 250: how often a running run journals its events for reconnecting clients |
//! | `HANDOFF_COPILOTKIT_BASE` | `/copilotkit`: where the CopilotKit runtime protocol is served |
//! | `HANDOFF_AUTH` | `none` (with a warning): `api-key`, `jwt`, `cf-access` as on deployed hosts (see `handoff::auth`) |
//! | `HANDOFF_CORS_ORIGINS` | no CORS |
//! | `HANDOFF_WEBHOOK_URLS`, `HANDOFF_WEBHOOK_SECRETS`, `HANDOFF_WEBHOOK_FORMAT`, `HANDOFF_WEBHOOK_ALLOW_LOOPBACK` | no webhooks (feature `webhooks`, see `handoff_http::webhooks`); approval links point at `HANDOFF_PUBLIC_URL`, else at this server's URL |
//! | `HANDOFF_OUTBOX_POLL_MS` | 1000: how often the outbox's due retries (A2A pushes, webhooks) are swept |
//! | `HANDOFF_SCHEDULE_POLL_MS` | 1000 (feature `schedules`): how often due schedule ticks are claimed (`POST /schedules`; each tick runs once across every process sharing the store, as a background run) |
//! | `HANDOFF_MCP_ELICIT_WAIT_MS` | 45000: how long an MCP session call waits for the answer to the elicitation it sent (see `handoff_http`) |
//! | `HANDOFF_SWEEP_SECS` | 15: how often runs whose instance died before their end are looked for and finished here (0: never; see `handoff_core::Engine::redrive_due`) |
//! | `RUST_LOG` | `info` (logs go to stderr) |
//!
//! Once listening it prints `Handoff dev server listening on http://…` as the
//! first line of stdout, then any [`Server::banner`] text; it stops gracefully
//! on Ctrl-C or SIGTERM.
//!
//! ```no_run
//! # use handoff::{Agent, AgentError, Finish, RunContext};
//! # struct MyAgent;
//! # #[async_trait::async_trait]
//! # impl Agent for MyAgent {
//! #     fn name(&self) -> &str { "my-agent" }
//! #     async fn run(&self, _: &mut RunContext) -> Result<Finish, AgentError> { Ok(Finish::done()) }
//! # }
//! #[tokio::main]
//! async fn main() -> Result<(), handoff::server::Error> {
//!     handoff::server::serve(MyAgent).await
//! }
//! ```

use std::sync::Arc;

use axum::serve::ListenerExt;
use handoff_core::{Agent, Runtime, Store};
use handoff_host_native::StoreChoice;
use handoff_http::Host;
use tokio::net::TcpListener;

use crate::options::{HostOptions, console_served, host_setters, native_authenticator};

/// Why the server could not start or stopped with an error.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Serves `agent` with every setting from the environment (see the [module docs](self)).
pub async fn serve(agent: impl Agent) -> Result<(), Error> {
    Server::new(agent).serve().await
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`), as text or as JSON lines
/// (`HANDOFF_LOG=json`), and traces over OTLP when an endpoint is set (feature `otel`).
/// Does nothing if a subscriber is already installed; [`Server::serve`] calls it.
pub fn init_logs() {
    if let Err(error) = crate::telemetry::init(env, crate::telemetry::LogFormat::Text, true) {
        eprintln!("{error}");
    }
}

/// Clock, ids, timers and a task spawner for tokio, with background runs
/// (`Prefer: respond-async`): the process outlives its requests, so a run with no client
/// is a tokio task like any other.
pub fn runtime() -> Runtime {
    handoff_host_native::runtime().with_background(handoff_host_native::TokioSpawn)
}

/// Binds 127.0.0.1:`PORT` (default 8080, `0` = any free port). Bind it yourself
/// when you need the URL before the server starts, and pass it to [`Server::listener`].
pub async fn bind_from_env() -> std::io::Result<TcpListener> {
    let port: u16 = env("PORT").and_then(|p| p.parse().ok()).unwrap_or(8080);
    TcpListener::bind(("127.0.0.1", port)).await
}

/// The store `HANDOFF_STORE` and `HANDOFF_DATA_DIR` name, opened. Open it yourself
/// when your agent needs the store too, and pass it to [`Server::env_store`].
#[derive(Clone)]
pub struct EnvStore {
    store: Arc<dyn Store>,
    choice: StoreChoice,
}

impl EnvStore {
    /// Opens the store the environment names (default: the embedded SQLite store).
    pub fn open() -> Result<Self, Error> {
        let choice = StoreChoice::from_lookup(env)?;
        Ok(EnvStore {
            store: choice.open()?,
            choice,
        })
    }

    /// The store, to share with the agent.
    pub fn shared(&self) -> Arc<dyn Store> {
        self.store.clone()
    }

    fn describe(&self) -> String {
        match &self.choice {
            StoreChoice::Memory { max_bytes: None } => "in-memory store".to_owned(),
            StoreChoice::Memory {
                max_bytes: Some(max_bytes),
            } => format!("in-memory store (budget {max_bytes} bytes)"),
            StoreChoice::Sqlite {
                dir,
                normal_sync: false,
            } => format!("embedded store in {}", dir.display()),
            StoreChoice::Sqlite {
                dir,
                normal_sync: true,
            } => format!("embedded store in {} (synchronous=NORMAL)", dir.display()),
        }
    }
}

/// Everything [`serve`] does, with each part settable.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use handoff::{Agent, AgentError, Finish, RunContext};
/// # struct MyAgent;
/// # #[async_trait::async_trait]
/// # impl Agent for MyAgent {
/// #     fn name(&self) -> &str { "my-agent" }
/// #     async fn run(&self, _: &mut RunContext) -> Result<Finish, AgentError> { Ok(Finish::done()) }
/// # }
/// # async fn start() -> Result<(), handoff::server::Error> {
/// let store = Arc::new(handoff::store::memory::MemoryStore::new());
/// let extra = axum::Router::new().route("/version", axum::routing::get(|| async { "1.0" }));
/// handoff::server::Server::new(MyAgent)
///     .store(store)
///     .routes(extra)
///     .serve()
///     .await
/// # }
/// ```
pub struct Server {
    agent: Arc<dyn Agent>,
    store: Option<(Arc<dyn Store>, String)>,
    runtime: Option<Runtime>,
    listener: Option<TcpListener>,
    options: HostOptions,
    banner: String,
}

impl Server {
    /// A server for `agent`; unset parts come from the environment.
    pub fn new(agent: impl Agent) -> Self {
        Server {
            agent: Arc::new(agent),
            store: None,
            runtime: None,
            listener: None,
            options: HostOptions::default(),
            banner: String::new(),
        }
    }

    /// Keeps state in `store` instead of the one the environment names.
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some((store, "custom store".to_owned()));
        self
    }

    /// Keeps state in the environment's store, opened already (see [`EnvStore`]).
    pub fn env_store(mut self, store: EnvStore) -> Self {
        let description = store.describe();
        self.store = Some((store.store, description));
        self
    }

    /// Uses `runtime` (clock, ids, timers) instead of [`runtime()`].
    pub fn runtime(mut self, runtime: Runtime) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Serves on `listener` instead of binding `PORT`.
    pub fn listener(mut self, listener: TcpListener) -> Self {
        self.listener = Some(listener);
        self
    }

    host_setters!("DevServer");

    /// Text printed after the `listening on` line (e.g. how to try the agent).
    pub fn banner(mut self, text: impl Into<String>) -> Self {
        self.banner = text.into();
        self
    }

    /// Serves until Ctrl-C or SIGTERM, then lets open responses finish.
    pub async fn serve(mut self) -> Result<(), Error> {
        crate::telemetry::init(env, crate::telemetry::LogFormat::Text, true)?;
        let authenticator = match self.options.authenticator.take() {
            Some(authenticator) => authenticator,
            None => native_authenticator(Host::DevServer)?,
        };
        let (store, store_description) = match self.store {
            Some(store) => store,
            None => {
                let store = EnvStore::open()?;
                let description = store.describe();
                (store.store, description)
            }
        };
        let listener = match self.listener {
            Some(listener) => listener,
            None => bind_from_env().await?,
        };
        let runtime = self.runtime.unwrap_or_else(runtime);
        self.options.native_outbounds(&store, &runtime, env);
        let url = format!("http://{}", listener.local_addr()?);
        self.options.own_url = Some(url.clone());
        let engine = self
            .options
            .engine(Host::DevServer, self.agent, store, runtime, env);
        if let Some(outbox) = engine.outbox().cloned() {
            tokio::spawn(sweep_outbox(outbox, crate::sweep::poll_ms(env)));
        }
        #[cfg(feature = "schedules")]
        tokio::spawn(tick_schedules(
            self.options.scheduler(&engine),
            crate::sweep::schedule_poll_ms(env),
        ));
        let sweep_secs = crate::sweep::sweep_secs(env);
        if sweep_secs > 0 {
            tokio::spawn(sweep_runs(engine.clone(), sweep_secs));
        }
        let agent_name = engine.agent_name().to_owned();
        let scheme = authenticator.scheme();
        let app = self
            .options
            .app(Host::DevServer, engine, authenticator, env)?;

        // SSE frames are small writes that must leave at once, not wait for Nagle.
        let listener = listener.tap_io(|tcp| {
            if let Err(err) = tcp.set_nodelay(true) {
                tracing::warn!(%err, "could not set TCP_NODELAY");
            }
        });
        let console = if console_served(Host::DevServer, env)? {
            format!("console: {url}/\n")
        } else {
            String::new()
        };
        let auth = if scheme == "none" {
            "WARNING: no authentication (HANDOFF_AUTH=none): anyone who can reach this port can \
             read every thread and answer its approvals\n"
                .to_owned()
        } else {
            format!("authentication: {scheme}\n")
        };
        print_banner(&format!(
            "Handoff dev server listening on {url} ({agent_name}, {store_description})\n{console}{auth}{}",
            self.banner
        ));
        axum::serve(listener, crate::telemetry::traced(app))
            .with_graceful_shutdown(shutdown())
            .await?;
        #[cfg(feature = "otel")]
        if let Some(telemetry) = crate::telemetry::telemetry() {
            telemetry.shutdown();
        }
        Ok(())
    }
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// Write errors (a closed stdout) are ignored: the server must keep serving
/// whoever started it.
fn print_banner(banner: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { () = ctrl_c => {}, () = term => {} }
}

/// Finishes runs whose instance died before their end, for as long as the server runs.
async fn sweep_runs(engine: handoff_core::Engine, every_secs: u64) {
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(every_secs));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let report = engine.redrive_due(crate::sweep::SWEEP_LIMIT, None).await;
        if report != handoff_core::RedriveReport::default() {
            tracing::info!(?report, "runs re-driven");
        }
    }
}

/// Delivers the outbox's due notices for as long as the server runs.
async fn sweep_outbox(outbox: Arc<handoff_core::outbox::Outbox>, every_ms: u64) {
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(every_ms));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        outbox.deliver_due(crate::sweep::SWEEP_LIMIT).await;
    }
}

/// Claims and starts the schedules' due ticks for as long as the server runs.
#[cfg(feature = "schedules")]
async fn tick_schedules(scheduler: handoff_http::schedules::Scheduler, every_ms: u64) {
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(every_ms));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        scheduler.tick().await;
    }
}
