//! The native host: your agent behind the Handoff router on tokio + axum.
//!
//! [`serve`] reads everything from the environment; [`Server`] sets any part
//! explicitly and falls back to the environment for the rest:
//!
//! | variable | default |
//! |---|---|
//! | `PORT` | 8080 (`0` picks a free port); the server binds 127.0.0.1 |
//! | `HANDOFF_STORE` | `sqlite`: the embedded store in `HANDOFF_DATA_DIR` (default `.handoff`); `memory` keeps state in the process |
//! | `HANDOFF_BODY_LIMIT` | 8 MiB |
//! | `HANDOFF_KEEP_ALIVE_MS` | 15000 |
//! | `HANDOFF_LEASE_MS` | 15 min |
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

use axum::Router;
use axum::serve::ListenerExt;
use handoff_core::{Agent, Engine, EngineConfig, Runtime, Store};
use handoff_http::{Host, HttpConfig, ThreadExtras};
use handoff_native::StoreChoice;
use tokio::net::TcpListener;

/// Why the server could not start or stopped with an error.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Serves `agent` with every setting from the environment (see the [module docs](self)).
pub async fn serve(agent: impl Agent) -> Result<(), Error> {
    Server::new(agent).serve().await
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`). Does nothing if a
/// subscriber is already installed; [`Server::serve`] calls it.
pub fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
}

/// Clock, ids, timers and a task spawner for tokio.
pub fn runtime() -> Runtime {
    handoff_native::runtime()
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
            StoreChoice::Memory => "in-memory store".to_owned(),
            StoreChoice::Sqlite(dir) => format!("embedded store in {}", dir.display()),
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
    routes: Router,
    thread_extras: Option<Arc<dyn ThreadExtras>>,
    http: Option<HttpConfig>,
    engine: Option<EngineConfig>,
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
            routes: Router::new(),
            thread_extras: None,
            http: None,
            engine: None,
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

    /// Adds routes of your own next to the Handoff routes (merged; may be called again).
    pub fn routes(mut self, routes: Router) -> Self {
        self.routes = self.routes.merge(routes);
        self
    }

    /// Adds fields of your own to `GET /threads/{threadId}`.
    pub fn thread_extras(mut self, extras: Arc<dyn ThreadExtras>) -> Self {
        self.thread_extras = Some(extras);
        self
    }

    /// HTTP settings instead of `HttpConfig::for_host(Host::DevServer, env)`.
    pub fn http_config(mut self, config: HttpConfig) -> Self {
        self.http = Some(config);
        self
    }

    /// Engine settings instead of `Host::DevServer.engine_config(env)`.
    pub fn engine_config(mut self, config: EngineConfig) -> Self {
        self.engine = Some(config);
        self
    }

    /// Text printed after the `listening on` line (e.g. how to try the agent).
    pub fn banner(mut self, text: impl Into<String>) -> Self {
        self.banner = text.into();
        self
    }

    /// Serves until Ctrl-C or SIGTERM, then lets open responses finish.
    pub async fn serve(self) -> Result<(), Error> {
        init_logs();
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
        let engine = Engine::with_config(
            self.agent,
            store,
            self.runtime.unwrap_or_else(runtime),
            self.engine
                .unwrap_or_else(|| Host::DevServer.engine_config(env)),
        );
        let http = self
            .http
            .unwrap_or_else(|| HttpConfig::for_host(Host::DevServer, env));
        let agent_name = engine.agent_name().to_owned();
        let router = match self.thread_extras {
            Some(extras) => handoff_http::router_with_thread_extras(engine, http, extras),
            None => handoff_http::router(engine, http),
        };
        let app = router.merge(self.routes);

        let url = format!("http://{}", listener.local_addr()?);
        // SSE frames are small writes that must leave at once, not wait for Nagle.
        let listener = listener.tap_io(|tcp| {
            if let Err(err) = tcp.set_nodelay(true) {
                tracing::warn!(%err, "could not set TCP_NODELAY");
            }
        });
        print_banner(&format!(
            "Handoff dev server listening on {url} ({agent_name}, {store_description})\n{}",
            self.banner
        ));
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown())
            .await?;
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
