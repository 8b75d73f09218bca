//! Agent cards: the parts the client uses, from v1.0 or v0.3 cards.

use serde_json::Value;

use super::ClientError;

/// Protocol version a card speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireVersion {
    /// A2A 1.0 (`SendMessage`).
    V1,
    /// A2A 0.3 (`message/send`).
    V03,
}

/// What the client needs from an agent card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardInfo {
    /// The agent's name.
    pub name: String,
    /// JSON-RPC endpoint.
    pub rpc_url: String,
    /// Version to speak.
    pub version: WireVersion,
    /// `capabilities.pushNotifications`.
    pub push_notifications: bool,
}

/// Reads the parts of an agent card the client uses (v1.0 or v0.3).
pub fn parse_card(card: &Value) -> Result<CardInfo, ClientError> {
    let name = card
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("agent")
        .to_owned();
    let push_notifications = card
        .pointer("/capabilities/pushNotifications")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let interfaces = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let jsonrpc = |i: &&Value| {
        i.get("protocolBinding")
            .or_else(|| i.get("transport"))
            .and_then(Value::as_str)
            .is_some_and(|b| b.eq_ignore_ascii_case("JSONRPC"))
    };
    if let Some(iface) = interfaces.iter().filter(jsonrpc).find(|i| {
        i.get("protocolVersion")
            .and_then(Value::as_str)
            .is_none_or(|v| v.starts_with('1'))
    }) && let Some(url) = iface.get("url").and_then(Value::as_str)
    {
        return Ok(CardInfo {
            name,
            rpc_url: url.to_owned(),
            version: WireVersion::V1,
            push_notifications,
        });
    }
    let url = card
        .get("url")
        .and_then(Value::as_str)
        .or_else(|| {
            interfaces
                .iter()
                .find(jsonrpc)
                .and_then(|i| i.get("url"))
                .and_then(Value::as_str)
        })
        .ok_or_else(|| ClientError::Protocol("the agent card has no JSON-RPC URL".to_owned()))?;
    Ok(CardInfo {
        name,
        rpc_url: url.to_owned(),
        version: WireVersion::V03,
        push_notifications,
    })
}
