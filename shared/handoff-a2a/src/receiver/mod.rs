//! The receiver: the delivery path (`handle`) here; subscriptions in
//! `subscribe`, the engine's reads in `views`.

use std::sync::Arc;

use a2a_types::{StreamResponse, TaskPushNotificationConfig};
use handoff_core::codes::ErrorCode;
use handoff_core::{Condition, Item, Runtime, Store, StoreError, Write};
use http::HeaderMap;
use tracing::Instrument;

use crate::auth;
use crate::config::ReceiverConfig;
use crate::digest::sha256_hex;
use crate::error::{AuthFailure, ReceiverError};
use crate::jwt::VerifiedJwt;
use crate::merge::{self, Context};
use crate::records::{
    self, Ack, JtiRecord, Outcome, PushConfigRecord, SeenRecord, TaskSnapshot, TaskWake, decode,
    encode,
};
use handoff_auth::jwks::JwksSource;

mod subscribe;
mod views;

/// Longest accepted `validationToken`.
pub const MAX_VALIDATION_TOKEN: usize = 512;
/// Shortest accepted token or `Authorization` credentials.
pub const MIN_SECRET_LEN: usize = 16;

/// A registered subscription: its id and the config to hand the remote agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// Id in the webhook URL.
    pub config_id: String,
    /// What to send as `taskPushNotificationConfig` (or create with
    /// `CreateTaskPushNotificationConfig`): URL, token and authentication.
    pub push_config: TaskPushNotificationConfig,
    /// When the subscription lapses.
    pub expires_at_ms: u64,
}

/// One authenticated, parsed delivery on its way into the store.
struct Delivery<'a> {
    record: &'a PushConfigRecord,
    event: &'a StreamResponse,
    task_id: &'a str,
    body_sha256: &'a str,
    jwt: Option<&'a VerifiedJwt>,
    now_ms: u64,
    task_key: String,
    seen_key: String,
    jti_key: Option<String>,
}

/// The push-notification receiver. Cheap to clone; share one per process.
#[derive(Clone)]
pub struct Receiver {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    runtime: Runtime,
    jwks: Arc<dyn JwksSource>,
    config: ReceiverConfig,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Ids in URLs and keys: 1 to 128 of `[A-Za-z0-9._~:-]`.
fn valid_config_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._~:-".contains(&b))
}

/// Task and thread ids: 1 to 256 characters, no control characters.
fn valid_id(id: &str) -> bool {
    (1..=256).contains(&id.len()) && !id.chars().any(char::is_control)
}

/// A thread's store partition (its id, scoped by tenant outside the default one).
fn valid_partition(partition: &str) -> bool {
    let (tenant, thread) = handoff_core::principal::split_partition(partition);
    handoff_core::principal::partition(tenant, thread).is_ok_and(|p| p == partition)
}

fn invalid(msg: impl Into<String>) -> ReceiverError {
    ReceiverError::InvalidSubscription(msg.into())
}

impl Receiver {
    /// A receiver over `store` (the one the threads live in), fetching sender keys through `jwks`.
    pub fn new(
        store: Arc<dyn Store>,
        runtime: Runtime,
        jwks: Arc<dyn JwksSource>,
        config: ReceiverConfig,
    ) -> Self {
        Receiver {
            inner: Arc::new(Inner {
                store,
                runtime,
                jwks,
                config,
            }),
        }
    }

    /// Tunables.
    pub fn config(&self) -> &ReceiverConfig {
        &self.inner.config
    }
    /// The injected runtime.
    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// Handles one delivery to `POST /a2a/push/{config_id}`.
    ///
    /// Order: size (413) → subscription (401) → credentials (401; 503 if the
    /// sender's keys cannot be fetched) → body (400) → task (403) → dedupe →
    /// merge and commit. A body delivered before gets the first [`Ack`] again
    /// with `duplicate: true`, and nothing is applied twice.
    ///
    /// Traced as an `a2a.server` span, `handoff.a2a.push` (no A2A method carries a push):
    /// `a2a.task.id`, `a2a.task.state` after the merge, `handoff.a2a.duplicate`, and
    /// `error.type` = the refusal's code.
    pub async fn handle(
        &self,
        config_id: &str,
        headers: &HeaderMap,
        body: &[u8],
        now_ms: u64,
    ) -> Result<Ack, ReceiverError> {
        let span = tracing::info_span!(
            target: "handoff::a2a",
            "a2a.server",
            otel.name = "handoff.a2a.push",
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            a2a.task.id = tracing::field::Empty,
            a2a.task.state = tracing::field::Empty,
            handoff.a2a.duplicate = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let result = self
            .handle_once(config_id, headers, body, now_ms)
            .instrument(span.clone())
            .await;
        match &result {
            Ok(ack) => {
                span.record("a2a.task.id", ack.task_id.as_str());
                span.record("a2a.task.state", ack.state.as_str());
                span.record("handoff.a2a.duplicate", ack.duplicate);
            }
            Err(error) => {
                span.record("otel.status_code", "ERROR");
                span.record("error.type", error.code().name);
            }
        }
        result
    }

    async fn handle_once(
        &self,
        config_id: &str,
        headers: &HeaderMap,
        body: &[u8],
        now_ms: u64,
    ) -> Result<Ack, ReceiverError> {
        let limit = self.inner.config.body_limit;
        if body.len() > limit {
            return Err(ReceiverError::TooLarge { limit });
        }
        let (record, version) = self
            .live_config(config_id, now_ms)
            .await?
            .ok_or(ReceiverError::Unauthorized(AuthFailure::UnknownConfig))?;
        let body_sha256 = sha256_hex(body);
        let inner = &self.inner;
        let authenticated = auth::authenticate(
            &record,
            headers,
            body,
            &body_sha256,
            now_ms,
            &*inner.jwks,
            &inner.config,
        )
        .await
        .inspect_err(|e| {
            tracing::info!(config_id, code = e.code().name, reason = ?e.auth_failure(), "a2a push rejected");
        })?;
        let (event, format) = StreamResponse::from_slice(body)
            .map_err(|e| ReceiverError::InvalidNotification(e.to_string()))?;
        let task_id = event.task_id().ok_or(ReceiverError::TaskMismatch)?;
        if !valid_id(task_id) {
            return Err(ReceiverError::InvalidNotification(
                "taskId must be 1 to 256 characters".to_owned(),
            ));
        }
        let jwt = authenticated.jwt;
        if jwt
            .as_ref()
            .and_then(|j| j.task_id.as_deref())
            .is_some_and(|claimed| claimed != task_id)
        {
            return Err(ReceiverError::TaskMismatch);
        }
        let record = self.bind(record, version, task_id, now_ms).await?;
        tracing::debug!(config_id, task_id, ?format, "a2a push accepted");
        self.apply(&Delivery {
            task_key: records::task_key(task_id),
            seen_key: records::seen_key(&record.config_id, &body_sha256),
            jti_key: jwt.as_ref().map(|j| records::jti_key(&j.single_use)),
            record: &record,
            event: &event,
            task_id,
            body_sha256: &body_sha256,
            jwt: jwt.as_ref(),
            now_ms,
        })
        .await
    }

    async fn apply(&self, d: &Delivery<'_>) -> Result<Ack, ReceiverError> {
        let inner = &self.inner;
        let thread = d.record.thread_id.as_str();
        let mut keys = vec![d.task_key.as_str(), d.seen_key.as_str()];
        keys.extend(d.jti_key.as_deref());
        for _ in 0..inner.config.max_attempts {
            let items = inner.store.get(thread, &keys, d.now_ms).await?;
            let (snapshot_item, seen, jti) =
                (&items[0], &items[1], items.get(2).and_then(Option::as_ref));
            if let Some(seen) = seen {
                let mut ack = decode::<SeenRecord>(seen)?.ack;
                ack.duplicate = true;
                return Ok(ack);
            }
            let prev: Option<TaskSnapshot> = snapshot_item.as_ref().map(decode).transpose()?;
            if let Some(jti) = jti {
                if decode::<JtiRecord>(jti)?.body_sha256 != d.body_sha256 {
                    return Err(ReceiverError::Unauthorized(AuthFailure::Replayed));
                }
                // Same token, same body, delivery record gone: a late duplicate.
                return Ok(Ack {
                    task_id: d.task_id.to_owned(),
                    outcome: Outcome::Unchanged,
                    state: prev.map(|p| p.task.status.state).unwrap_or_default(),
                    duplicate: true,
                });
            }
            let cx = Context {
                thread_id: thread,
                config_id: &d.record.config_id,
                task_id: d.task_id,
                now_ms: d.now_ms,
            };
            let merged = merge::merge(prev.as_ref(), d.event, cx);
            let ack = Ack {
                task_id: d.task_id.to_owned(),
                outcome: merged.outcome,
                state: merged.snapshot.task.status.state,
                duplicate: false,
            };
            let writes = self.writes(d, snapshot_item.as_ref(), &merged, &ack);
            match inner.store.commit(thread, writes, d.now_ms).await {
                Ok(()) => {
                    if merged.wake {
                        tracing::info!(thread_id = thread, task_id = d.task_id, state = %ack.state, "a2a task woke its thread");
                    }
                    return Ok(ack);
                }
                // Another delivery for this thread won the race: read again.
                Err(StoreError::ConditionFailed { .. }) => {}
                Err(StoreError::TooLarge(_)) => {
                    return Err(ReceiverError::TooLarge {
                        limit: inner.config.body_limit,
                    });
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(ReceiverError::Unavailable("write contention".to_owned()))
    }

    /// One all-or-nothing batch: the snapshot (compare-and-set on its version,
    /// or just checked when unchanged), the delivery record, the consumed JWT,
    /// and the wake.
    fn writes(
        &self,
        d: &Delivery<'_>,
        snapshot_item: Option<&Item>,
        merged: &merge::Merged,
        ack: &Ack,
    ) -> Vec<Write> {
        let config = &self.inner.config;
        let now = d.now_ms;
        let snapshot_condition =
            snapshot_item.map_or(Condition::Absent, |i| Condition::Version(i.version));
        let keep = Some(now.saturating_add(config.snapshot_ttl_ms));
        let dedupe_until = now.saturating_add(config.dedupe_ttl_ms);
        let mut writes = Vec::with_capacity(4);
        writes.push(if merged.changed {
            Write::put(
                d.task_key.as_str(),
                snapshot_condition,
                encode(&merged.snapshot),
                keep,
            )
        } else {
            Write::check(d.task_key.as_str(), snapshot_condition)
        });
        writes.push(Write::put(
            d.seen_key.as_str(),
            Condition::Absent,
            encode(&SeenRecord { ack: ack.clone() }),
            Some(dedupe_until),
        ));
        if let (Some(jwt), Some(key)) = (d.jwt, &d.jti_key) {
            writes.push(Write::put(
                key.as_str(),
                Condition::Absent,
                encode(&JtiRecord {
                    body_sha256: d.body_sha256.to_owned(),
                }),
                Some(jwt.keep_until_ms.max(dedupe_until)),
            ));
        }
        if merged.wake {
            let snap = &merged.snapshot;
            let wake = TaskWake {
                thread_id: d.record.thread_id.clone(),
                task_id: snap.task.id.clone(),
                config_id: d.record.config_id.clone(),
                seq: snap.wake_seq,
                state: snap.task.status.state,
                status: snap.task.status.clone(),
                recorded_at_ms: now,
            };
            writes.push(Write::put(
                records::wake_key(&snap.task.id),
                Condition::Always,
                encode(&wake),
                keep,
            ));
        }
        writes
    }
}
