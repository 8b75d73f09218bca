//! Subscriptions: register, bind, revoke, and the ownership challenge.

use a2a_types::TaskPushNotificationConfig;
use handoff_core::{Condition, StoreError, Write};

use super::{
    MAX_VALIDATION_TOKEN, MIN_SECRET_LEN, Receiver, Registration, invalid, valid_config_id,
    valid_id, valid_partition,
};
use crate::config::Subscription;
use crate::digest::sha256_hex;
use crate::error::{AuthFailure, ReceiverError};
use crate::records::{
    CONFIG_KEY, PushConfigRecord, StoredAuthorization, config_partition, decode, encode,
};
use handoff_auth::url_guard::check_jwks_url;

impl Receiver {
    /// Registers a subscription and returns the config to give the remote agent.
    pub async fn register(&self, sub: Subscription) -> Result<Registration, ReceiverError> {
        let auth = &sub.auth;
        if !valid_partition(&sub.thread_id) {
            return Err(invalid("threadId must be 1 to 256 characters"));
        }
        if sub.task_id.as_deref().is_some_and(|t| !valid_id(t)) {
            return Err(invalid("taskId must be 1 to 256 characters"));
        }
        let base = sub.callback_base_url.trim_end_matches('/');
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(invalid("callbackBaseUrl must be an http(s) URL"));
        }
        if auth.token.is_none() && auth.authorization.is_none() && auth.jwt.is_none() {
            return Err(invalid("at least one authentication method is required"));
        }
        if auth.require_all && auth.authorization.is_some() && auth.jwt.is_some() {
            return Err(invalid(
                "authorization and jwt share the Authorization header; require_all cannot ask for both",
            ));
        }
        if auth
            .token
            .as_ref()
            .is_some_and(|t| t.len() < MIN_SECRET_LEN)
        {
            return Err(invalid("the token must have at least 16 characters"));
        }
        let authorization = match &auth.authorization {
            None => None,
            Some(info) => {
                let credentials = info.credentials.as_deref().unwrap_or("");
                if info.scheme.is_empty() || !info.scheme.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err(invalid("the authentication scheme must be a single token"));
                }
                if credentials.len() < MIN_SECRET_LEN {
                    return Err(invalid("credentials must have at least 16 characters"));
                }
                Some(StoredAuthorization {
                    scheme: info.scheme.clone(),
                    credentials_sha256: sha256_hex(credentials.as_bytes()),
                })
            }
        };
        if let Some(jwt) = &auth.jwt {
            check_jwks_url(&jwt.jwks_url, self.inner.config.allow_insecure_jwks_url)
                .map_err(invalid)?;
            if jwt.algorithms.is_empty() {
                return Err(invalid("at least one JWT algorithm is required"));
            }
        }
        let now = self.inner.runtime.now_ms();
        let config_id = self.inner.runtime.ids.next_id("a2apush");
        if !valid_config_id(&config_id) {
            return Err(ReceiverError::Store(format!(
                "the id generator made an unusable config id: {config_id}"
            )));
        }
        let ttl = sub
            .ttl_ms
            .unwrap_or(self.inner.config.default_subscription_ttl_ms);
        let record = PushConfigRecord {
            config_id: config_id.clone(),
            thread_id: sub.thread_id.clone(),
            task_id: sub.task_id.clone(),
            token_sha256: auth.token.as_deref().map(|t| sha256_hex(t.as_bytes())),
            authorization,
            jwt: auth.jwt.clone(),
            require_all: auth.require_all,
            created_at_ms: now,
            expires_at_ms: now.saturating_add(ttl),
        };
        let write = Write::put(
            CONFIG_KEY,
            Condition::Absent,
            encode(&record),
            Some(record.expires_at_ms),
        );
        match self
            .inner
            .store
            .commit(&config_partition(&config_id), vec![write], now)
            .await
        {
            Ok(()) => {}
            Err(StoreError::ConditionFailed { .. }) => {
                return Err(ReceiverError::Store(format!(
                    "config id {config_id} reused"
                )));
            }
            Err(other) => return Err(other.into()),
        }
        Ok(Registration {
            push_config: TaskPushNotificationConfig {
                tenant: None,
                id: Some(config_id.clone()),
                task_id: sub.task_id,
                url: format!("{base}/a2a/push/{config_id}"),
                token: auth.token.clone(),
                authentication: auth.authorization.clone(),
            },
            config_id,
            expires_at_ms: record.expires_at_ms,
        })
    }

    /// The live subscription `config_id`, if any.
    pub async fn subscription(
        &self,
        config_id: &str,
        now_ms: u64,
    ) -> Result<Option<PushConfigRecord>, ReceiverError> {
        Ok(self.live_config(config_id, now_ms).await?.map(|(r, _)| r))
    }

    pub(super) async fn live_config(
        &self,
        config_id: &str,
        now_ms: u64,
    ) -> Result<Option<(PushConfigRecord, u64)>, ReceiverError> {
        if !valid_config_id(config_id) {
            return Ok(None);
        }
        let partition = config_partition(config_id);
        match self
            .inner
            .store
            .get_one(&partition, CONFIG_KEY, now_ms)
            .await?
        {
            Some(item) => Ok(Some((decode(&item)?, item.version))),
            None => Ok(None),
        }
    }

    /// Binds a subscription registered without a task to `task_id` (idempotent).
    pub async fn bind_task(&self, config_id: &str, task_id: &str) -> Result<(), ReceiverError> {
        if !valid_id(task_id) {
            return Err(invalid("taskId must be 1 to 256 characters"));
        }
        let now = self.inner.runtime.now_ms();
        let (record, version) = self
            .live_config(config_id, now)
            .await?
            .ok_or(ReceiverError::Unauthorized(AuthFailure::UnknownConfig))?;
        self.bind(record, version, task_id, now)
            .await
            .map(|_| ())
            .map_err(|e| match e {
                ReceiverError::TaskMismatch => ReceiverError::AlreadyBound,
                other => other,
            })
    }

    pub(super) async fn bind(
        &self,
        mut record: PushConfigRecord,
        mut version: u64,
        task_id: &str,
        now_ms: u64,
    ) -> Result<PushConfigRecord, ReceiverError> {
        for _ in 0..self.inner.config.max_attempts {
            match record.task_id.as_deref() {
                Some(bound) if bound == task_id => return Ok(record),
                Some(_) => return Err(ReceiverError::TaskMismatch),
                None => {}
            }
            record.task_id = Some(task_id.to_owned());
            let write = Write::put(
                CONFIG_KEY,
                Condition::Version(version),
                encode(&record),
                Some(record.expires_at_ms),
            );
            let partition = config_partition(&record.config_id);
            match self
                .inner
                .store
                .commit(&partition, vec![write], now_ms)
                .await
            {
                Ok(()) => return Ok(record),
                Err(StoreError::ConditionFailed { .. }) => {
                    (record, version) = self
                        .live_config(&record.config_id, now_ms)
                        .await?
                        .ok_or(ReceiverError::Unauthorized(AuthFailure::UnknownConfig))?;
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(ReceiverError::Unavailable("write contention".to_owned()))
    }

    /// Ends a subscription: later deliveries are 401.
    pub async fn revoke(&self, config_id: &str) -> Result<(), ReceiverError> {
        if !valid_config_id(config_id) {
            return Ok(());
        }
        let now = self.inner.runtime.now_ms();
        let write = Write::delete(CONFIG_KEY, Condition::Always);
        Ok(self
            .inner
            .store
            .commit(&config_partition(config_id), vec![write], now)
            .await?)
    }

    /// The URL-ownership challenge: `GET ...?validationToken=X` answers `X`
    /// for a live subscription (1 to 512 visible ASCII characters).
    pub async fn challenge(
        &self,
        config_id: &str,
        validation_token: Option<&str>,
        now_ms: u64,
    ) -> Result<String, ReceiverError> {
        if self.live_config(config_id, now_ms).await?.is_none() {
            return Err(ReceiverError::Unauthorized(AuthFailure::UnknownConfig));
        }
        let token = validation_token.unwrap_or("");
        if token.is_empty() || token.len() > MAX_VALIDATION_TOKEN {
            return Err(ReceiverError::InvalidChallenge(
                "validationToken must be 1 to 512 characters".to_owned(),
            ));
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ReceiverError::InvalidChallenge(
                "validationToken must be visible ASCII".to_owned(),
            ));
        }
        Ok(token.to_owned())
    }
}
