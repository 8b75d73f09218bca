//! What every host builder shares: extra routes, thread extras, settings, who may call
//! and what they may do, and the one way the router is assembled from them.

use std::sync::Arc;

use axum::Router;
use handoff_auth::{AuthConfig, JwksSource};
use handoff_core::outbox::{Notifier, Outbox};
use handoff_core::schema::SchemaValidator;
use handoff_core::{Agent, Authorizer, Clock, Engine, EngineConfig, Runtime, Store};
use handoff_http::{Authenticator, CorsOrigins, Host, HttpConfig, NoAuth, Routes, ThreadExtras};

/// The parts a host builder may set; unset ones come from the environment.
pub(crate) struct HostOptions {
    pub(crate) routes: Router,
    /// The host's own routes behind the authenticator.
    pub(crate) protected_routes: Router,
    pub(crate) thread_extras: Option<Arc<dyn ThreadExtras>>,
    pub(crate) http: Option<HttpConfig>,
    pub(crate) engine: Option<EngineConfig>,
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) schema_validator: Option<Arc<dyn SchemaValidator>>,
    /// The host's own validator (the platform's on Workers): for agents without one.
    pub(crate) host_schema_validator: Option<Arc<dyn SchemaValidator>>,
    /// More agents for the CopilotKit routes: id, agent, description.
    pub(crate) agents: Vec<(String, Arc<dyn Agent>, Option<String>)>,
    /// Their engines, built with the primary one.
    pub(crate) agent_engines: Vec<(String, Engine, Option<String>)>,
    /// How the host reaches A2A push-notification webhooks (none: pushes are not sent).
    #[cfg_attr(not(feature = "a2a-server"), allow(dead_code))]
    pub(crate) push_outbound: Option<Arc<dyn handoff_core::outbound::Outbound>>,
    /// Signs the A2A pushes (`HANDOFF_A2A_PUSH_JWT=true`, native hosts).
    pub(crate) push_signer: Option<Arc<dyn handoff_auth::PushSigner>>,
    /// How the host reaches the operator's webhooks (`HANDOFF_WEBHOOK_URLS`; none: they
    /// are not sent).
    #[cfg_attr(not(feature = "webhooks"), allow(dead_code))]
    pub(crate) webhook_outbound: Option<Arc<dyn handoff_core::outbound::Outbound>>,
    /// The host's own URL where it knows it (the dev server's): the base of the console
    /// links webhooks carry when `HANDOFF_PUBLIC_URL` is unset.
    #[cfg_attr(not(feature = "webhooks"), allow(dead_code))]
    pub(crate) own_url: Option<String>,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            routes: Router::new(),
            protected_routes: Router::new(),
            thread_extras: None,
            http: None,
            engine: None,
            authenticator: None,
            authorizer: None,
            schema_validator: None,
            host_schema_validator: None,
            agents: Vec::new(),
            agent_engines: Vec::new(),
            push_outbound: None,
            push_signer: None,
            webhook_outbound: None,
            own_url: None,
        }
    }
}

/// The validator an engine is given: the explicit one, else none (the agent's own
/// applies, [`Agent::answer_validator`]), else the host's; with none of them the
/// engine keeps its default.
fn chosen_validator(
    explicit: &Option<Arc<dyn SchemaValidator>>,
    agent: &dyn Agent,
    host: &Option<Arc<dyn SchemaValidator>>,
) -> Option<Arc<dyn SchemaValidator>> {
    explicit
        .clone()
        .or_else(|| host.clone().filter(|_| agent.answer_validator().is_none()))
}

impl HostOptions {
    /// The engine for `agent` on `host`.
    pub(crate) fn engine(
        &mut self,
        host: Host,
        agent: Arc<dyn Agent>,
        store: Arc<dyn Store>,
        runtime: Runtime,
        vars: impl Fn(&str) -> Option<String>,
    ) -> Engine {
        let config = self
            .engine
            .take()
            .unwrap_or_else(|| host.engine_config(&vars));
        let authorizer = self.authorizer.take();
        let validator = self.schema_validator.take();
        let host_validator = self.host_schema_validator.take();
        let (outbox, notifiers) = self.outbox(&store, &runtime, &vars);
        let build = |agent: Arc<dyn Agent>| {
            let validator = chosen_validator(&validator, agent.as_ref(), &host_validator);
            let mut engine =
                Engine::with_config(agent, store.clone(), runtime.clone(), config.clone());
            if let Some(authorizer) = &authorizer {
                engine = engine.with_authorizer(authorizer.clone());
            }
            if let Some(validator) = validator {
                engine = engine.with_schema_validator(Some(validator));
            }
            for notifier in &notifiers {
                engine = engine.with_notifier(notifier.clone());
            }
            if let Some(outbox) = &outbox {
                engine = engine.with_outbox(outbox.clone());
            }
            engine
        };
        // The other agents share the store, settings and policies of the primary one.
        self.agent_engines = std::mem::take(&mut self.agents)
            .into_iter()
            .map(|(id, agent, description)| (id, build(agent), description))
            .collect();
        build(agent)
    }

    /// What runs' ends are told to, from the store's outbox: served A2A tasks push their
    /// state changes, and every run is told to the operator's webhooks
    /// (`HANDOFF_WEBHOOK_URLS`; malformed settings are refused by [`HostOptions::app`]).
    #[cfg_attr(
        not(feature = "webhooks"),
        allow(unused_variables, unused_mut, clippy::unused_self)
    )]
    pub(crate) fn outbox(
        &mut self,
        store: &Arc<dyn Store>,
        runtime: &Runtime,
        vars: &impl Fn(&str) -> Option<String>,
    ) -> (Option<Outbox>, Vec<Arc<dyn Notifier>>) {
        let mut outbox = None::<Outbox>;
        let mut notifiers: Vec<Arc<dyn Notifier>> = Vec::new();
        let mut add = |kind: &str, sender: Arc<dyn handoff_core::outbox::Sender>| {
            let base = outbox
                .take()
                .unwrap_or_else(|| Outbox::new(store.clone(), runtime.clone()));
            outbox = Some(base.sender(kind, sender));
        };
        // Pushes are for the tasks of the A2A server: without it, nobody registers any.
        #[cfg(feature = "a2a-server")]
        if let Some(outbound) = self.push_outbound.take() {
            let mut push = handoff_http::A2aPush::new(store.clone(), outbound);
            if let Some(signer) = &self.push_signer {
                push = push.with_signer(signer.clone(), runtime.clone());
            }
            add(handoff_http::A2A_PUSH_KIND, Arc::new(push));
            notifiers.push(Arc::new(handoff_http::A2aPushNotifier));
        }
        #[cfg(feature = "webhooks")]
        if let (Some(config), Some(outbound)) = (
            handoff_http::webhooks::WebhookConfig::from_lookup(vars)
                .ok()
                .flatten(),
            self.webhook_outbound.take(),
        ) {
            use handoff_http::webhooks::{WEBHOOK_KIND, WebhookNotifier, WebhookSender};
            let sender = WebhookSender::new(config, outbound, runtime.clock.clone());
            add(WEBHOOK_KIND, Arc::new(sender));
            let console_base = vars("HANDOFF_PUBLIC_URL")
                .map(|url| url.trim().to_owned())
                .filter(|url| !url.is_empty())
                .or_else(|| self.own_url.clone());
            notifiers.push(Arc::new(WebhookNotifier::new(console_base)));
        }
        (outbox, notifiers)
    }

    #[cfg(feature = "schedules")]
    /// The scheduler of the host's agents: `engine`'s and the CopilotKit agents' (built
    /// by [`HostOptions::engine`]), ticking each schedule on its agent's engine.
    pub(crate) fn scheduler(&self, engine: &Engine) -> handoff_http::schedules::Scheduler {
        self.agent_engines.iter().fold(
            handoff_http::schedules::Scheduler::new(engine.clone()),
            |scheduler, (id, engine, _)| scheduler.agent(id.clone(), engine.clone()),
        )
    }

    /// The Handoff routes behind `authenticator`, the host's own routes, and CORS
    /// (`HANDOFF_CORS_ORIGINS`) around all of them.
    pub(crate) fn app(
        self,
        host: Host,
        engine: Engine,
        authenticator: Arc<dyn Authenticator>,
        vars: impl Fn(&str) -> Option<String>,
    ) -> Result<Router, String> {
        handoff_http::check_limits(&vars)?;
        #[cfg(feature = "webhooks")]
        handoff_http::webhooks::check_webhooks(&vars)?;
        refuse_unbuilt_webhooks(&vars, cfg!(feature = "webhooks"))?;
        let http = self
            .http
            .unwrap_or_else(|| HttpConfig::for_host(host, &vars));
        let mut routes = Routes::new(engine, http).authenticator(authenticator);
        if let Some(signer) = self.push_signer {
            routes = routes.push_signer(signer);
        }
        if let Some(extras) = self.thread_extras {
            routes = routes.thread_extras(extras);
        }
        for (id, engine, description) in self.agent_engines {
            routes = routes.agent(id, engine, description);
        }
        let routes = routes.merge(self.routes).protected(self.protected_routes);
        let app = match console_served(host, &vars)? {
            // The fallback, so an application's own `/` route wins instead of clashing.
            #[cfg(feature = "console")]
            true => routes.fallback(handoff_console::routes::<()>()),
            _ => routes,
        }
        .build();
        Ok(
            match CorsOrigins::from_lookup(&vars).map_err(|e| e.to_string())? {
                Some(cors) => cors.apply(app),
                None => app,
            },
        )
    }
}

/// Whether this host serves the web console at `/`: built with the `console` feature and not
/// turned off with `HANDOFF_CONSOLE=off`. Workers serve it as static assets instead
/// (`[assets]` in wrangler.toml), so the wasm stays small.
pub(crate) fn console_served(
    host: Host,
    vars: impl Fn(&str) -> Option<String>,
) -> Result<bool, String> {
    #[cfg(feature = "console")]
    if host != Host::Workers {
        return handoff_console::enabled(vars).map_err(|e| e.to_string());
    }
    let _ = (host, vars);
    Ok(false)
}

/// The authenticator `HANDOFF_AUTH` names, with `jwks` fetching identity providers' key
/// sets. Unset is `none` on the dev server only: a deployed host refuses to serve.
pub(crate) fn authenticator_from_env(
    host: Host,
    config: AuthConfig,
    jwks: Arc<dyn JwksSource>,
    clock: Arc<dyn Clock>,
) -> Result<Arc<dyn Authenticator>, String> {
    match config.build(jwks, clock) {
        Some(authenticator) => Ok(authenticator),
        None if host == Host::DevServer => Ok(Arc::new(NoAuth)),
        None => Err(format!(
            "HANDOFF_AUTH is not set: a deployed endpoint never serves unauthenticated by \
             accident. Set it to {} (or to none, for local development only).",
            match host {
                Host::Lambda => "iam, jwt or api-key",
                _ => "cf-access, jwt or api-key",
            }
        )),
    }
}

/// In a build without the feature `webhooks` (`built` false), endpoints set for them would
/// never be told anything: refuse to start rather than drop every event in silence.
fn refuse_unbuilt_webhooks(
    vars: &impl Fn(&str) -> Option<String>,
    built: bool,
) -> Result<(), String> {
    match vars("HANDOFF_WEBHOOK_URLS").filter(|urls| !built && !urls.trim().is_empty()) {
        Some(_) => Err(
            "HANDOFF_WEBHOOK_URLS is set, but this build has no webhooks: turn on the handoff \
             crate's feature `webhooks`"
                .to_owned(),
        ),
        None => Ok(()),
    }
}

#[cfg(any(feature = "server", feature = "lambda"))]
impl HostOptions {
    /// A native host's outbound clients, each behind the outbound guard: the A2A pushes'
    /// (`HANDOFF_A2A_ALLOW_LOOPBACK`) and their JWT signer (`HANDOFF_A2A_PUSH_JWT`), for the
    /// A2A server's tasks (without it nothing registers one), and the operator's webhooks'
    /// (`HANDOFF_WEBHOOK_ALLOW_LOOPBACK=true` admits loopback and `http://`; a malformed value
    /// is refused by [`HostOptions::app`]). Each only with its feature.
    #[cfg_attr(not(feature = "a2a-server"), allow(unused_variables))]
    #[cfg_attr(
        not(any(feature = "a2a-server", feature = "webhooks")),
        allow(clippy::unused_self)
    )]
    pub(crate) fn native_outbounds(
        &mut self,
        store: &Arc<dyn Store>,
        runtime: &Runtime,
        vars: impl Fn(&str) -> Option<String> + Copy,
    ) {
        #[cfg(any(feature = "a2a-server", feature = "webhooks"))]
        use handoff_host_native::outbound::{NetPolicy, UreqOutbound};
        #[cfg(feature = "a2a-server")]
        {
            let policy = NetPolicy::from_lookup(vars);
            self.push_outbound = Some(Arc::new(UreqOutbound::guarded(policy)));
            self.push_signer = push_signer(store, runtime, vars);
        }
        #[cfg(feature = "webhooks")]
        {
            let policy = NetPolicy {
                allow_loopback: handoff_http::webhooks::allows_loopback(vars).unwrap_or(false),
            };
            self.webhook_outbound = Some(Arc::new(UreqOutbound::guarded(policy)));
        }
    }
}

/// The authenticator `HANDOFF_AUTH` names, fetching key sets with the native client.
#[cfg(any(feature = "server", feature = "lambda"))]
pub(crate) fn native_authenticator(host: Host) -> Result<Arc<dyn Authenticator>, String> {
    use handoff_host_native::outbound::{NetPolicy, UreqOutbound};
    let env = |key: &str| std::env::var(key).ok();
    let config = AuthConfig::from_lookup(env).map_err(|e| e.to_string())?;
    let policy = NetPolicy {
        allow_loopback: config.allows_insecure_jwks(),
    };
    authenticator_from_env(
        host,
        config,
        Arc::new(handoff_auth::HttpJwks(UreqOutbound::guarded(policy))),
        Arc::new(handoff_host_native::SystemClock),
    )
}

/// The setters every host builder has, over its `options: HostOptions` field.
macro_rules! host_setters {
    ($host:literal) => {
        /// Adds routes of your own next to the Handoff routes (merged; may be called
        /// again). They are not behind the authenticator: protect them yourself.
        pub fn routes(mut self, routes: axum::Router) -> Self {
            self.options.routes = self.options.routes.merge(routes);
            self
        }

        /// Adds routes of your own behind the authenticator, like the Handoff routes: a
        /// request without credentials is 401 before them, and their handlers find the
        /// caller's `Principal` in the request extensions (`Extension<Principal>`).
        pub fn protected_routes(mut self, routes: axum::Router) -> Self {
            self.options.protected_routes = self.options.protected_routes.merge(routes);
            self
        }

        /// Adds fields of your own to `GET /threads/{threadId}`.
        pub fn thread_extras(
            mut self,
            extras: std::sync::Arc<dyn handoff_http::ThreadExtras>,
        ) -> Self {
            self.options.thread_extras = Some(extras);
            self
        }

        #[doc = concat!("HTTP settings instead of `HttpConfig::for_host(Host::", $host, ", env)`.")]
        pub fn http_config(mut self, config: handoff_http::HttpConfig) -> Self {
            self.options.http = Some(config);
            self
        }

        #[doc = concat!("Engine settings instead of `Host::", $host, ".engine_config(env)`.")]
        pub fn engine_config(mut self, config: handoff_core::EngineConfig) -> Self {
            self.options.engine = Some(config);
            self
        }

        /// Who may call, instead of the authenticator `HANDOFF_AUTH` names.
        pub fn authenticator(
            mut self,
            authenticator: std::sync::Arc<dyn handoff_http::Authenticator>,
        ) -> Self {
            self.options.authenticator = Some(authenticator);
            self
        }

        /// Checks answers against `responseSchema`s with `validator` instead of the agent's
        /// own (`Agent::answer_validator`) or the host's default (`jsonschema` natively with
        /// feature `json-schema`, Cloudflare's validator on Workers).
        pub fn schema_validator(
            mut self,
            validator: std::sync::Arc<dyn handoff_core::schema::SchemaValidator>,
        ) -> Self {
            self.options.schema_validator = Some(validator);
            self
        }

        /// Serves `agent` as agent `id` on the CopilotKit routes (`{base}/agent/{id}/…`,
        /// listed by `{base}/info` with `description`) next to the host's agent. It shares
        /// the host's store, settings and policies, so its thread ids must not collide with
        /// other agents' (CopilotKit mints UUIDs).
        pub fn copilotkit_agent(
            mut self,
            id: impl Into<String>,
            agent: impl handoff_core::Agent,
            description: Option<String>,
        ) -> Self {
            self.options
                .agents
                .push((id.into(), std::sync::Arc::new(agent), description));
            self
        }

        /// What callers may do, instead of [`handoff_core::OwnerPolicy`].
        pub fn authorizer(
            mut self,
            authorizer: std::sync::Arc<dyn handoff_core::Authorizer>,
        ) -> Self {
            self.options.authorizer = Some(authorizer);
            self
        }
    };
}
pub(crate) use host_setters;

#[cfg(all(test, feature = "server"))]
mod tests {
    use std::io::{Read, Write};

    use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
    use handoff_core::store::memory::MemoryStore;
    use handoff_core::{AgentError, Finish, RunContext};

    use super::*;

    struct Says(&'static str);

    #[async_trait::async_trait]
    impl Agent for Says {
        fn name(&self) -> &str {
            self.0
        }

        async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
            ctx.say(&format!("{} here", self.0));
            Ok(Finish::done())
        }
    }

    struct Typed;

    #[async_trait::async_trait]
    impl Agent for Typed {
        async fn run(&self, _ctx: &mut RunContext) -> Result<Finish, AgentError> {
            Ok(Finish::done())
        }

        fn answer_validator(&self) -> Option<Arc<dyn SchemaValidator>> {
            Some(Arc::new(handoff_core::schema::TypedAnswers::new()))
        }
    }

    #[test]
    fn an_explicit_validator_wins_then_the_agents_then_the_hosts() {
        let explicit: Arc<dyn SchemaValidator> =
            Arc::new(handoff_core::schema::TypedAnswers::new());
        let host: Arc<dyn SchemaValidator> = Arc::new(handoff_core::schema::TypedAnswers::new());
        let (some_explicit, some_host) = (Some(explicit.clone()), Some(host.clone()));
        let same = |chosen: Option<Arc<dyn SchemaValidator>>,
                    expected: &Arc<dyn SchemaValidator>| {
            chosen.is_some_and(|c| Arc::ptr_eq(&c, expected))
        };
        assert!(same(
            chosen_validator(&some_explicit, &Typed, &some_host),
            &explicit
        ));
        assert!(same(
            chosen_validator(&some_explicit, &Says("a"), &some_host),
            &explicit
        ));
        // The agent's own is applied by the engine itself: the host's must not replace it.
        assert!(chosen_validator(&None, &Typed, &some_host).is_none());
        assert!(same(chosen_validator(&None, &Says("a"), &some_host), &host));
        assert!(chosen_validator(&None, &Says("a"), &None).is_none());
    }

    /// One HTTP/1.1 exchange with `addr`, the whole answer as text.
    fn exchange(addr: std::net::SocketAddr, request: String) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn copilotkit_agents_are_served_next_to_the_host_agent() {
        let mut options = HostOptions::default();
        options.agents.push((
            "billing".to_owned(),
            Arc::new(Says("billing")),
            Some("Billing questions".to_owned()),
        ));
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let runtime = Runtime::new(
            ManualClock::new(1_764_421_200_000),
            SequentialIds::new("h"),
            NeverSleep,
        );
        let vars = |_: &str| None;
        let engine = options.engine(
            Host::DevServer,
            Arc::new(Says("main")),
            store,
            runtime,
            vars,
        );
        let app = options
            .app(Host::DevServer, engine, Arc::new(NoAuth), vars)
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });

        let get = "GET /copilotkit/info HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
        let info = tokio::task::spawn_blocking(move || exchange(addr, get.to_owned()))
            .await
            .unwrap();
        assert!(info.starts_with("HTTP/1.1 200"), "{info}");
        for expected in [r#""main":{"#, r#""billing":{"#, "Billing questions"] {
            assert!(info.contains(expected), "{expected} in {info}");
        }
        let body = r#"{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"hi"}]}"#;
        let post = format!(
            "POST /copilotkit/agent/billing/run HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let run = tokio::task::spawn_blocking(move || exchange(addr, post))
            .await
            .unwrap();
        assert!(run.contains("billing here"), "the billing agent ran: {run}");
        assert!(!run.contains("main here"), "{run}");
    }
}

/// `HANDOFF_A2A_PUSH_JWT=true` on a native host: its A2A pushes carry a JWT signed with the
/// deployment's key (kept in `store`), published at `/.well-known/jwks.json`.
#[cfg(all(any(feature = "server", feature = "lambda"), feature = "a2a-server"))]
pub(crate) fn push_signer(
    store: &Arc<dyn Store>,
    runtime: &Runtime,
    vars: impl Fn(&str) -> Option<String>,
) -> Option<Arc<dyn handoff_auth::PushSigner>> {
    let on =
        vars("HANDOFF_A2A_PUSH_JWT").is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    on.then(|| {
        Arc::new(handoff_auth::PushKeys::new(store.clone(), runtime.clone()))
            as Arc<dyn handoff_auth::PushSigner>
    })
}

#[cfg(test)]
mod unbuilt_tests {
    use super::refuse_unbuilt_webhooks;

    #[test]
    fn webhook_settings_refuse_to_start_a_build_without_webhooks() {
        let set = |key: &str| {
            (key == "HANDOFF_WEBHOOK_URLS").then(|| "ops=https://hooks.example.com/x".to_owned())
        };
        let err = refuse_unbuilt_webhooks(&set, false).unwrap_err();
        assert!(
            err.contains("HANDOFF_WEBHOOK_URLS") && err.contains("`webhooks`"),
            "{err}"
        );
        assert!(
            !err.contains("hooks.example.com"),
            "a webhook URL may be a credential: {err}"
        );
        assert_eq!(
            refuse_unbuilt_webhooks(&set, true),
            Ok(()),
            "built: checked by the webhooks module"
        );
        let blank = |key: &str| (key == "HANDOFF_WEBHOOK_URLS").then(|| " ".to_owned());
        assert_eq!(refuse_unbuilt_webhooks(&blank, false), Ok(()));
        assert_eq!(refuse_unbuilt_webhooks(&|_: &str| None, false), Ok(()));
    }
}
