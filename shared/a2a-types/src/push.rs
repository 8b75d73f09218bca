//! `TaskPushNotificationConfig` and `AuthenticationInfo` (v1.0 merged shape; v0.3 wrapper read).

use serde::{Deserialize, Deserializer, Serialize};

/// How the agent authenticates its webhook calls: `Authorization: {scheme} {credentials}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// IANA HTTP authentication scheme (`Bearer`, `Basic`, ...), case-insensitive.
    pub scheme: String,
    /// The credentials (format depends on the scheme).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

#[derive(Deserialize)]
struct AuthenticationWire {
    #[serde(default)]
    scheme: Option<String>,
    /// v0.3: a list; the first one is used.
    #[serde(default)]
    schemes: Option<Vec<String>>,
    #[serde(default)]
    credentials: Option<String>,
}

impl<'de> Deserialize<'de> for AuthenticationInfo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = AuthenticationWire::deserialize(deserializer)?;
        let scheme = wire
            .scheme
            .or_else(|| wire.schemes.and_then(|s| s.into_iter().next()))
            .ok_or_else(|| serde::de::Error::custom("authentication needs a `scheme`"))?;
        Ok(AuthenticationInfo {
            scheme,
            credentials: wire.credentials,
        })
    }
}

/// Where and how an agent pushes updates of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Config id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Task id (empty when sent inline with `SendMessage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Webhook URL.
    pub url: String,
    /// A token unique to this task or session (sent back by SDKs in a token header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// `Authorization` header the agent must send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigWire {
    #[serde(default)]
    tenant: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default, alias = "task_id")]
    task_id: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    authentication: Option<AuthenticationInfo>,
    /// v0.3 `TaskPushNotificationConfig` wrapper.
    #[serde(default, alias = "push_notification_config")]
    push_notification_config: Option<Box<ConfigWire>>,
}

impl<'de> Deserialize<'de> for TaskPushNotificationConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut wire = ConfigWire::deserialize(deserializer)?;
        if let Some(inner) = wire.push_notification_config.take() {
            let inner = *inner;
            wire = ConfigWire {
                tenant: wire.tenant.or(inner.tenant),
                id: inner.id.or(wire.id),
                task_id: wire.task_id.or(inner.task_id),
                url: inner.url.or(wire.url),
                token: inner.token.or(wire.token),
                authentication: inner.authentication.or(wire.authentication),
                push_notification_config: None,
            };
        }
        let url = wire
            .url
            .ok_or_else(|| serde::de::Error::custom("a push notification config needs a `url`"))?;
        Ok(TaskPushNotificationConfig {
            tenant: wire.tenant,
            id: wire.id,
            task_id: wire.task_id,
            url,
            token: wire.token,
            authentication: wire.authentication,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_the_v03_wrapper() {
        let config: TaskPushNotificationConfig = serde_json::from_value(json!({
            "taskId": "t1",
            "pushNotificationConfig": {
                "id": "c1",
                "url": "https://example.com/a2a/push/c1",
                "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "abc"}
            }
        }))
        .unwrap();
        assert_eq!(config.task_id.as_deref(), Some("t1"));
        assert_eq!(config.id.as_deref(), Some("c1"));
        assert_eq!(
            config.authentication,
            Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: Some("abc".into())
            })
        );
        assert!(serde_json::from_value::<TaskPushNotificationConfig>(json!({"id": "c"})).is_err());
        assert!(serde_json::from_value::<AuthenticationInfo>(json!({"schemes": []})).is_err());
    }
}
