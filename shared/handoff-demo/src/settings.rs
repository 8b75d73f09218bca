//! The demo as every host serves it, built by one function from the host's environment.
//!
//! Each host's main passes its own environment lookup (`std::env::var` on the dev server
//! and Lambda, `env.var` on the Worker, where secrets read the same way) to
//! [`DemoSettings::from_lookup`], and the demo reads every one of its variables through
//! [`DemoSettings::var`]: **an empty variable is unset**, on every host. (A deploy template
//! or a shell that writes `DEMO_LLM_MODEL=` means "not set"; read as a value it would ask
//! for a model named "" or send pushes to an empty URL.)
//!
//! What a host lends the demo (store, clock, the A2A receiver and client, where pushes
//! reach it) comes in [`DemoHost`]; the host's own settings (`HANDOFF_STORE`, `PORT`,
//! `HANDOFF_A2A_*` …) stay the host's.

use std::sync::Arc;

use handoff_a2a::{A2aClient, Receiver};
use handoff_core::outbound::Outbound;
use handoff_core::{Runtime, Store};

use crate::llm::{Demo, choose};
use crate::{DemoAgent, FraudReview, Ledger};

/// The demo's environment, read under one rule: an empty variable is unset.
pub struct DemoSettings<L> {
    lookup: L,
}

/// Where the fraud agent's A2A pushes reach the demo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushUrl {
    /// This host receives them (dev server, Worker): `HANDOFF_PUBLIC_URL`, else the host's
    /// own base URL given here (the listening address, the request's origin).
    ThisHost(String),
    /// A separate webhook function receives them (Lambda): `HANDOFF_A2A_WEBHOOK_URL`, its
    /// Function URL; no default.
    WebhookFunction,
}

/// What a host lends the demo.
pub struct DemoHost {
    /// Where the threads (and the demo's ledger) live.
    pub store: Arc<dyn Store>,
    /// Clock and ids.
    pub runtime: Runtime,
    /// Registers push subscriptions and reads task snapshots (fraud review).
    pub receiver: Receiver,
    /// Delegates the fraud review.
    pub a2a_client: A2aClient,
    /// Where the review's pushes come back.
    pub push_url: PushUrl,
}

/// The demo a host serves: the agent, and the ledger behind `GET /demo/orders/{orderId}`.
pub struct ServedDemo {
    /// Scripted, or model-driven when `DEMO_LLM` names a provider with a key.
    pub agent: Demo,
    /// The simulated payment ledger the refunds move.
    pub ledger: Ledger,
}

impl<L: Fn(&str) -> Option<String>> DemoSettings<L> {
    /// The demo's settings from the host's environment `lookup`.
    pub fn from_lookup(lookup: L) -> Self {
        DemoSettings { lookup }
    }

    /// One variable: `None` when unset or empty.
    pub fn var(&self, key: &str) -> Option<String> {
        (self.lookup)(key).filter(|value| !value.is_empty())
    }

    /// The base URL the fraud agent pushes to, if any (see [`PushUrl`]).
    pub fn push_url(&self, push_url: PushUrl) -> Option<String> {
        match push_url {
            PushUrl::ThisHost(own) => Some(self.var("HANDOFF_PUBLIC_URL").unwrap_or(own)),
            PushUrl::WebhookFunction => self.var("HANDOFF_A2A_WEBHOOK_URL"),
        }
    }

    /// The demo (see the crate docs' settings table): the scripted agent with the fraud
    /// review when `DEMO_FRAUD_AGENT_URL` asks for one, model-driven when `DEMO_LLM` names a
    /// provider with a key (`models` then reaches the model, `mcp(allow_loopback)` the
    /// `HANDOFF_MCP_SERVERS`). A malformed or missing setting is an error naming the
    /// variable: the host refuses to start.
    pub fn demo(
        &self,
        host: DemoHost,
        models: impl FnOnce() -> Arc<dyn Outbound>,
        mcp: impl FnOnce(bool) -> Arc<dyn Outbound>,
    ) -> Result<ServedDemo, String> {
        let var = |key: &str| self.var(key);
        let push_url = self.push_url(host.push_url);
        let fraud = FraudReview::from_lookup(var, host.receiver, host.a2a_client, push_url)?;
        let scripted = DemoAgent::from_lookup(host.store, var, fraud);
        let ledger = scripted.ledger().clone();
        let agent = choose(scripted, host.runtime, var, models, mcp)?;
        Ok(ServedDemo { agent, ledger })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::provider_from_lookup;

    fn settings<'a>(
        vars: &'a [(&str, &str)],
    ) -> DemoSettings<impl Fn(&str) -> Option<String> + 'a> {
        DemoSettings::from_lookup(move |key: &str| {
            vars.iter()
                .find(|(name, _)| *name == key)
                .map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn an_empty_variable_is_unset() {
        let env = settings(&[("DEMO_LLM_MODEL", ""), ("DEMO_LLM", "openai")]);
        assert_eq!(env.var("DEMO_LLM_MODEL"), None);
        assert_eq!(env.var("DEMO_LLM").as_deref(), Some("openai"));
        assert_eq!(env.var("UNSET"), None);
    }

    #[test]
    fn an_empty_key_leaves_the_scripted_demo() {
        // The dev server read `OPENAI_API_KEY=` as a key and sent the model an empty one.
        let env = settings(&[("DEMO_LLM", "openai"), ("OPENAI_API_KEY", "")]);
        assert_eq!(provider_from_lookup(|key| env.var(key)), None);
    }

    #[test]
    fn an_empty_model_name_is_the_providers_default() {
        let env = settings(&[
            ("DEMO_LLM", "openai"),
            ("OPENAI_API_KEY", "sk-test"),
            ("DEMO_LLM_MODEL", ""),
        ]);
        let provider = provider_from_lookup(|key| env.var(key)).expect("a provider");
        assert_eq!(provider.model(), "gpt-4o-mini");
    }

    #[test]
    fn an_empty_public_url_pushes_to_this_host() {
        let env = settings(&[("HANDOFF_PUBLIC_URL", "")]);
        let own = PushUrl::ThisHost("http://127.0.0.1:8080".into());
        assert_eq!(env.push_url(own).as_deref(), Some("http://127.0.0.1:8080"));
        let env = settings(&[("HANDOFF_PUBLIC_URL", "https://demo.example")]);
        let own = PushUrl::ThisHost("http://127.0.0.1:8080".into());
        assert_eq!(env.push_url(own).as_deref(), Some("https://demo.example"));
    }

    #[test]
    fn an_empty_webhook_url_is_no_webhook() {
        let env = settings(&[("HANDOFF_A2A_WEBHOOK_URL", ""), ("HANDOFF_PUBLIC_URL", "x")]);
        assert_eq!(env.push_url(PushUrl::WebhookFunction), None);
        let env = settings(&[("HANDOFF_A2A_WEBHOOK_URL", "https://hook.example")]);
        let url = env.push_url(PushUrl::WebhookFunction);
        assert_eq!(url.as_deref(), Some("https://hook.example"));
    }
}
