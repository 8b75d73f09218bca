//! Who is calling: the [`Principal`] an authenticator produced, and the tenant scope of
//! every store partition.
//!
//! A thread lives in its tenant: the same `threadId` in two tenants is two threads.
//! The default tenant keeps the bare thread id as its partition (so a single-tenant
//! deployment's records are where they always were); any other tenant's partitions are
//! `{tenant}\u{1f}{threadId}`. Neither a tenant nor a thread id may contain a control
//! character, so the two forms can never collide.

use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// The tenant of principals that name none (`HANDOFF_AUTH=none`, JWTs without the tenant claim).
pub const DEFAULT_TENANT: &str = "default";
/// The subject of an unauthenticated caller (`HANDOFF_AUTH=none`).
pub const ANONYMOUS: &str = "anonymous";
/// Between a tenant and a thread id in a partition name.
const TENANT_SEPARATOR: char = '\u{1f}';
/// Longest tenant, subject or thread id accepted.
pub const MAX_ID_LEN: usize = 256;

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    /// Isolation boundary: threads of one tenant are invisible to every other.
    pub tenant: String,
    /// Who, within the tenant (a user id, an API key's name, a caller ARN).
    pub subject: String,
    /// What the caller may approve (`metadata["handoff.requiredRole"]` on interrupts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
}

impl Principal {
    /// A principal without roles.
    pub fn new(tenant: impl Into<String>, subject: impl Into<String>) -> Self {
        Principal {
            tenant: tenant.into(),
            subject: subject.into(),
            roles: Vec::new(),
        }
    }

    /// The caller of an endpoint without authentication (`HANDOFF_AUTH=none`).
    pub fn anonymous() -> Self {
        Principal::new(DEFAULT_TENANT, ANONYMOUS)
    }

    /// With these roles.
    #[must_use]
    pub fn with_roles<I, S>(mut self, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the principal holds `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }

    /// Whether `self` and `other` are the same caller (tenant and subject).
    pub fn same_as(&self, other: &Owner) -> bool {
        self.subject == other.subject
    }

    /// The store partition of `thread_id` in this principal's tenant.
    pub fn partition(&self, thread_id: &str) -> Result<String, CoreError> {
        partition(&self.tenant, thread_id)
    }
}

/// The principal recorded on a thread or an answer (the tenant is the partition's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    /// The principal's subject.
    pub subject: String,
}

impl From<&Principal> for Owner {
    fn from(principal: &Principal) -> Self {
        Owner {
            subject: principal.subject.clone(),
        }
    }
}

/// The store partition of `thread_id` in `tenant`.
///
/// Refuses empty, over-long or control-character ids (they could forge another
/// tenant's partition) with [`CoreError::InvalidInput`].
pub fn partition(tenant: &str, thread_id: &str) -> Result<String, CoreError> {
    check_id("tenant", tenant)?;
    check_id("threadId", thread_id)?;
    if tenant == DEFAULT_TENANT {
        Ok(thread_id.to_owned())
    } else {
        Ok(format!("{tenant}{TENANT_SEPARATOR}{thread_id}"))
    }
}

/// The tenant and thread id of a partition made by [`partition`].
pub fn split_partition(partition: &str) -> (&str, &str) {
    partition
        .split_once(TENANT_SEPARATOR)
        .unwrap_or((DEFAULT_TENANT, partition))
}

/// The idempotency key a downstream service sees for effect `key` of `thread_id` in
/// `tenant`: `{threadId}/{key}` in the default tenant, `{tenant}:{threadId}/{key}` in any
/// other, with `%`, `/` and `:` percent-encoded in the tenant and thread id. The first
/// `/` ends the scope and a `:` before it marks a tenant, so no two (tenant, thread, key)
/// triples share a key (ids without those characters read as before).
pub fn idempotency_key(tenant: &str, thread_id: &str, key: &str) -> String {
    let thread = escape_scope(thread_id);
    if tenant == DEFAULT_TENANT {
        [&*thread, "/", key].concat()
    } else {
        [&*escape_scope(tenant), ":", &*thread, "/", key].concat()
    }
}

/// The tenant of a key made by [`idempotency_key`] (`None`: not one of ours).
pub fn idempotency_key_tenant(idempotency_key: &str) -> Option<String> {
    let (scope, _) = idempotency_key.split_once('/')?;
    Some(match scope.split_once(':') {
        Some((tenant, _)) => unescape_scope(tenant),
        None => DEFAULT_TENANT.to_owned(),
    })
}

fn escape_scope(part: &str) -> std::borrow::Cow<'_, str> {
    if !part.contains(['%', '/', ':']) {
        return std::borrow::Cow::Borrowed(part);
    }
    let mut out = String::with_capacity(part.len() + 8);
    for c in part.chars() {
        match c {
            '%' => out.push_str("%25"),
            '/' => out.push_str("%2F"),
            ':' => out.push_str("%3A"),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

fn unescape_scope(part: &str) -> String {
    part.replace("%2F", "/")
        .replace("%3A", ":")
        .replace("%25", "%")
}

/// Refuses empty, over-long or control-character ids with [`CoreError::InvalidInput`]
/// naming the field.
pub(crate) fn check_id(name: &str, value: &str) -> Result<(), CoreError> {
    if value.trim().is_empty() || value.len() > MAX_ID_LEN {
        return Err(CoreError::InvalidInput(format!(
            "{name} must be 1 to {MAX_ID_LEN} characters"
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(CoreError::InvalidInput(format!(
            "{name} must not contain control characters"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_tenant_keeps_bare_thread_ids_and_others_are_prefixed() {
        assert_eq!(partition(DEFAULT_TENANT, "t-1").unwrap(), "t-1");
        let scoped = partition("acme", "t-1").unwrap();
        assert_ne!(scoped, "t-1");
        assert_eq!(split_partition(&scoped), ("acme", "t-1"));
        assert_eq!(split_partition("t-1"), (DEFAULT_TENANT, "t-1"));
    }

    #[test]
    fn idempotency_keys_are_injective_across_tenants_threads_and_keys() {
        let cases = [
            (DEFAULT_TENANT, "acme/t", "k"),
            ("acme", "t", "k"),
            (DEFAULT_TENANT, "acme:t", "k"),
            (DEFAULT_TENANT, "t", "k1/k2"),
            ("t", "k1", "k2"),
            (DEFAULT_TENANT, "t/k1", "k2"),
            ("a:b", "t", "k"),
            ("a", "b:t", "k"),
            ("a%3Ab", "t", "k"),
        ];
        let keys: Vec<String> = cases
            .iter()
            .map(|(a, b, c)| idempotency_key(a, b, c))
            .collect();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(
                keys.iter().filter(|k| *k == key).count(),
                1,
                "{key} of {:?}",
                cases[i]
            );
            assert_eq!(
                idempotency_key_tenant(key).as_deref(),
                Some(cases[i].0),
                "{key}"
            );
        }
        // The common case reads as it always did.
        assert_eq!(
            idempotency_key(DEFAULT_TENANT, "t-1", "refund:c1"),
            "t-1/refund:c1"
        );
        assert_eq!(idempotency_key("acme", "t-1", "k"), "acme:t-1/k");
    }

    #[test]
    fn a_thread_id_cannot_forge_another_tenants_partition() {
        let forged = format!("acme{TENANT_SEPARATOR}t-1");
        assert!(partition(DEFAULT_TENANT, &forged).is_err());
        assert!(partition("ac\u{1f}me", "t-1").is_err());
        assert!(partition("", "t-1").is_err());
        assert!(partition("acme", &"x".repeat(MAX_ID_LEN + 1)).is_err());
    }
}
