//! Webhooks: every run's end told to the operator's endpoints, from the store's outbox
//! (see `handoff_core::outbox`), so an event is never lost when an instance dies and keeps
//! one `webhook-id` however often it is sent.
//!
//! | variable | what |
//! |---|---|
//! | `HANDOFF_WEBHOOK_URLS` | `name=url,…`: the endpoints, `https://` (operators only: never a caller's URL); unset: no webhooks |
//! | `HANDOFF_WEBHOOK_SECRETS` | `name=secret,…`: each endpoint's signing secret; `whsec_…` is base64 after the prefix, any other text its UTF-8 bytes; required for every endpoint unless the format is `slack` |
//! | `HANDOFF_WEBHOOK_FORMAT` | unset: the JSON event; `slack`: `{"text"}` with the approval link, for Slack's incoming webhooks |
//! | `HANDOFF_WEBHOOK_ALLOW_LOOPBACK` | `true`: loopback addresses and `http://` are admitted (tests only) |
//!
//! A malformed setting refuses to start with a message naming it (never a secret or a
//! URL: a Slack webhook's URL is a credential).
//!
//! **Events**, for every run, background or streamed, written in the commit that ends it
//! ([`WebhookNotifier`]): `interrupt.created` for each interrupt it left pending (who may
//! answer: `requiredRoles`, `notRequester` and `requestedBy`, and `consoleUrl`, the console
//! page with its approval card), then `run.finished` (`outcome` `success`, `interrupt` or
//! `cancelled`, and `usage`) or `run.failed` (`error` `{code, message}`). The body is
//! `{"type", "timestamp", "data"}`; `data` always has `tenant`, `threadId` and `runId`.
//!
//! **Delivery** ([`WebhookSender`]): the first attempt right after the run's end, then
//! the host's outbox sweep, backing off 5 s, 10 s, 20 s, … up to an hour, for 24 hours.
//! Each attempt is signed as Standard Webhooks says (`webhook-id`, `webhook-timestamp`,
//! `webhook-signature: v1,…`); any 2xx serves an endpoint, which a retry then skips.
//!
//! `GET /webhooks/deliveries` (role `admin`) lists the tenant's recent events with their
//! status and attempts.

mod config;
mod events;
mod send;

pub use config::{
    ALLOW_LOOPBACK_VAR, Endpoint, FORMAT_VAR, SECRETS_VAR, Secret, URLS_VAR, WebhookConfig,
    WebhookFormat, allows_loopback, check_webhooks,
};
pub use events::WebhookNotifier;
pub use send::{WebhookSender, signature};

/// The outbox kind of webhook events.
pub const WEBHOOK_KIND: &str = "webhook";

pub use crate::ADMIN_ROLE;

/// The listing of a tenant's webhook events, newest first.
pub fn deliveries_scope(tenant: &str) -> String {
    ["webhooks\u{1f}", tenant].concat()
}

#[cfg(test)]
mod tests;
