//! Push notifications sent: a task's state changes, POSTed as A2A `StreamResponse`s to the
//! webhooks its caller configured, from the store's outbox (see `handoff_core::outbox`).
//!
//! - Every run served for a task carries the watch `a2a-task` = its id, and so does the run
//!   that answers its interrupts, by whatever path (the console, AG-UI).
//! - [`A2aPushNotifier`] turns the end of such a run into one notice: the task's new
//!   status as a `statusUpdate`. It is written in the run's last commit.
//! - [`A2aPush`] delivers it to each of the task's configs, with its token
//!   (`X-A2A-Notification-Token`) and its `Authorization` when the config has credentials.
//!   A receiver that fails is tried again with backoff; one served is not sent twice.

use std::sync::Arc;
use std::time::Duration;

use a2a_types::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
use async_trait::async_trait;
use handoff_auth::PushSigner;
use handoff_core::outbound::{Outbound, Timeout, sensitive};
use handoff_core::outbox::{Notice, Notifier, OutboxItem, RunFacts, SendOutcome, Sender, Watch};
use handoff_core::time_fmt::format_ms;
use handoff_core::{Principal, Runtime, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::fold::{Folded, agent_message};
use super::task_store;

/// The outbox kind of A2A push notifications.
pub const A2A_PUSH_KIND: &str = "a2a-push";
/// The watch a task's runs carry.
pub(crate) const TASK_WATCH: &str = "a2a-task";
/// The watch of the run that withdraws a task's questions (`CancelTask`).
pub(crate) const CANCEL_WATCH: &str = "a2a-cancel";
/// How long one receiver may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(15);

/// A notice's body.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushBody {
    tenant: String,
    task_id: String,
    response: StreamResponse,
    /// Only to this config (the status a newly registered config is sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    only: Option<String>,
}

/// The notice that sends a task's current `status` to its config `config_id` alone: a
/// webhook registered after the task last changed still gets one delivery.
pub(crate) fn current_status(
    tenant: &str,
    task: &a2a_types::Task,
    config_id: &str,
    now_ms: u64,
) -> OutboxItem {
    let response = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone().unwrap_or_default(),
        status: task.status.clone(),
        metadata: None,
    });
    let body = PushBody {
        tenant: tenant.to_owned(),
        task_id: task.id.clone(),
        response,
        only: Some(config_id.to_owned()),
    };
    let id = format!(
        "ntc_{}",
        task_store::digest(&[&task.id, config_id, &now_ms.to_string()])
    );
    OutboxItem::pending(
        id,
        A2A_PUSH_KIND,
        serde_json::to_value(body).unwrap_or_default(),
        now_ms,
    )
}

/// The watches of a run served for `task_id`.
pub(crate) fn task_watch(task_id: &str) -> Watch {
    Watch::new(TASK_WATCH, task_id)
}

/// Asks for a push about each watched task whose run ended.
#[derive(Debug, Clone, Copy, Default)]
pub struct A2aPushNotifier;

impl Notifier for A2aPushNotifier {
    fn notices(&self, facts: &RunFacts<'_>) -> Vec<Notice> {
        // Every run's end asks; only runs serving a task have anything to say.
        if !facts.watches.iter().any(|w| w.kind == TASK_WATCH) {
            return Vec::new();
        }
        let mut folded = Folded::default();
        folded.push(facts.terminal);
        facts
            .watches
            .iter()
            .filter(|w| w.kind == TASK_WATCH)
            .map(|watch| {
                let canceled = facts
                    .watches
                    .contains(&Watch::new(CANCEL_WATCH, &watch.key));
                let state = if canceled {
                    TaskState::Canceled
                } else {
                    folded.task_state()
                };
                let message = (!folded.status_parts.is_empty() && !canceled).then(|| {
                    agent_message(
                        format!("status-{}", facts.run_id),
                        &watch.key,
                        facts.thread_id,
                        folded.status_parts.clone(),
                    )
                });
                let response = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: watch.key.clone(),
                    context_id: facts.thread_id.to_owned(),
                    status: TaskStatus {
                        state,
                        message,
                        timestamp: Some(format_ms(facts.now_ms)),
                    },
                    metadata: None,
                });
                let body = PushBody {
                    tenant: facts.tenant.to_owned(),
                    task_id: watch.key.clone(),
                    response,
                    only: None,
                };
                Notice::new(
                    A2A_PUSH_KIND,
                    serde_json::to_value(body).unwrap_or_default(),
                )
            })
            .collect()
    }
}

/// Delivers pushes with `outbound` (which applies the outbound URL guard).
#[derive(Clone)]
pub struct A2aPush {
    store: Arc<dyn Store>,
    outbound: Arc<dyn Outbound>,
    signer: Option<(Arc<dyn PushSigner>, Runtime)>,
}

impl A2aPush {
    /// A sender reading task configs from `store`.
    pub fn new(store: Arc<dyn Store>, outbound: Arc<dyn Outbound>) -> Self {
        A2aPush {
            store,
            outbound,
            signer: None,
        }
    }

    /// Each push also carries `Authorization: Bearer <JWT>` signed by `signer` (unless its
    /// config has credentials of its own): `iat` from `runtime`'s clock, a `jti` per attempt,
    /// the body's `request_body_sha256` and the `taskId`.
    #[must_use]
    pub fn with_signer(mut self, signer: Arc<dyn PushSigner>, runtime: Runtime) -> Self {
        self.signer = Some((signer, runtime));
        self
    }

    async fn jwt(
        &self,
        item: &OutboxItem,
        task_id: &str,
        config_id: &str,
        body: &[u8],
    ) -> Result<Option<String>, String> {
        let Some((signer, runtime)) = &self.signer else {
            return Ok(None);
        };
        let claims = serde_json::json!({
            "iat": runtime.now_ms() / 1000,
            "jti": format!("{}:{config_id}:{}", item.id, item.attempts),
            "request_body_sha256": hex::encode(Sha256::digest(body)),
            "taskId": task_id,
        });
        signer.sign(&claims).await.map(Some)
    }

    async fn post(
        &self,
        config: &a2a_types::TaskPushNotificationConfig,
        body: &[u8],
        jwt: Option<String>,
    ) -> Result<(), String> {
        let mut request = http::Request::post(&config.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec())
            .map_err(|e| format!("{}: {e}", config.url))?;
        let headers = request.headers_mut();
        if let Some(token) = &config.token {
            let value =
                sensitive(token).map_err(|_| "the token is not a header value".to_owned())?;
            headers.insert("x-a2a-notification-token", value);
        }
        // The config's own credentials, else this deployment's signed JWT.
        let credentials = config.authentication.as_ref().and_then(|auth| {
            let credentials = auth.credentials.as_ref()?;
            Some(format!("{} {credentials}", auth.scheme))
        });
        if let Some(authorization) = credentials.or(jwt.map(|jwt| format!("Bearer {jwt}"))) {
            let value = sensitive(&authorization)
                .map_err(|_| "the credentials are not a header value".to_owned())?;
            headers.insert(http::header::AUTHORIZATION, value);
        }
        request.extensions_mut().insert(Timeout(SEND_TIMEOUT));
        let response = self
            .outbound
            .send(request)
            .await
            .map_err(|e| e.to_string())?;
        match response.status() {
            s if s.is_success() => Ok(()),
            s => Err(format!("answered {s}")),
        }
    }
}

impl std::fmt::Debug for A2aPush {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aPush").finish_non_exhaustive()
    }
}

#[async_trait]
impl Sender for A2aPush {
    async fn send(&self, _partition: &str, item: &OutboxItem) -> SendOutcome {
        let Ok(body) = serde_json::from_value::<PushBody>(item.body.clone()) else {
            return SendOutcome::Dropped("not an A2A push".into());
        };
        // The task's tenant is all a read needs; the owner is not checked by the sender.
        let tenant = Principal::new(body.tenant.clone(), "a2a-push");
        let task =
            task_store::load(self.store.as_ref(), &tenant, &body.task_id, item.created_ms).await;
        let configs = match task {
            Ok(Some(stored)) => stored.record.push_configs,
            Ok(None) => return SendOutcome::Dropped("the task is gone".into()),
            Err(err) => {
                return SendOutcome::Retry {
                    done: Vec::new(),
                    error: format!("{err:?}"),
                };
            }
        };
        let bytes = serde_json::to_vec(&body.response).unwrap_or_default();
        let (mut done, mut errors) = (Vec::new(), Vec::new());
        for config in &configs {
            let id = config.id.clone().unwrap_or_default();
            if item.done.contains(&id) || body.only.as_ref().is_some_and(|only| *only != id) {
                continue;
            }
            let jwt = match self.jwt(item, &body.task_id, &id, &bytes).await {
                Ok(jwt) => jwt,
                Err(error) => {
                    errors.push(format!("{id}: signing: {error}"));
                    continue;
                }
            };
            match self.post(config, &bytes, jwt).await {
                Ok(()) => done.push(id),
                Err(error) => errors.push(format!("{id}: {error}")),
            }
        }
        SendOutcome::of_receivers(done, errors)
    }
}
