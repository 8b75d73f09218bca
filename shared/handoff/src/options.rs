//! What every host builder shares: extra routes, thread extras, settings, who may call
//! and what they may do, and the one way the router is assembled from them.

use std::sync::Arc;

use axum::Router;
use handoff_auth::{AuthConfig, JwksSource};
use handoff_core::schema::SchemaValidator;
use handoff_core::{Agent, Authorizer, Clock, Engine, EngineConfig, Runtime, Store};
use handoff_http::{Authenticator, CorsOrigins, Host, HttpConfig, NoAuth, Routes, ThreadExtras};

/// The parts a host builder may set; unset ones come from the environment.
pub(crate) struct HostOptions {
    pub(crate) routes: Router,
    pub(crate) thread_extras: Option<Arc<dyn ThreadExtras>>,
    pub(crate) http: Option<HttpConfig>,
    pub(crate) engine: Option<EngineConfig>,
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) schema_validator: Option<Arc<dyn SchemaValidator>>,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            routes: Router::new(),
            thread_extras: None,
            http: None,
            engine: None,
            authenticator: None,
            authorizer: None,
            schema_validator: None,
        }
    }
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
            .unwrap_or_else(|| host.engine_config(vars));
        let mut engine = Engine::with_config(agent, store, runtime, config);
        if let Some(authorizer) = self.authorizer.take() {
            engine = engine.with_authorizer(authorizer);
        }
        if let Some(validator) = self.schema_validator.take() {
            engine = engine.with_schema_validator(Some(validator));
        }
        engine
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
        let http = self
            .http
            .unwrap_or_else(|| HttpConfig::for_host(host, &vars));
        let mut routes = Routes::new(engine, http).authenticator(authenticator);
        if let Some(extras) = self.thread_extras {
            routes = routes.thread_extras(extras);
        }
        let app = routes.build().merge(self.routes);
        Ok(
            match CorsOrigins::from_lookup(&vars).map_err(|e| e.to_string())? {
                Some(cors) => cors.apply(app),
                None => app,
            },
        )
    }
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

/// The authenticator `HANDOFF_AUTH` names, fetching key sets with the native client.
#[cfg(any(feature = "server", feature = "lambda"))]
pub(crate) fn native_authenticator(host: Host) -> Result<Arc<dyn Authenticator>, String> {
    use handoff_native::a2a::{NetPolicy, ureq_jwks};
    let env = |key: &str| std::env::var(key).ok();
    let config = AuthConfig::from_lookup(env).map_err(|e| e.to_string())?;
    let policy = NetPolicy {
        allow_loopback: config.allows_insecure_jwks(),
    };
    authenticator_from_env(
        host,
        config,
        Arc::new(ureq_jwks(policy)),
        Arc::new(handoff_native::SystemClock),
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

        /// Checks answers against `responseSchema`s with `validator` instead of the host's
        /// default (`jsonschema` natively, Cloudflare's validator on Workers).
        pub fn schema_validator(
            mut self,
            validator: std::sync::Arc<dyn handoff_core::schema::SchemaValidator>,
        ) -> Self {
            self.options.schema_validator = Some(validator);
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
