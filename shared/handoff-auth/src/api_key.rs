//! `HANDOFF_AUTH=api-key`: static keys from `HANDOFF_API_KEYS`.

use futures::future::BoxFuture;
use http::request::Parts;
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use crate::config_error::AuthConfigError;
use crate::vars;
use crate::{AuthError, Authenticator, CHALLENGE, Principal, bearer_token, checked_principal};

/// One configured key: only its digest is kept.
#[derive(Clone)]
struct Entry {
    principal: Principal,
    digest: [u8; 32],
}

/// Authenticates `Authorization: Bearer KEY` against configured keys.
///
/// Every request hashes the presented key and compares the digest with every configured
/// digest in constant time, so neither timing nor an early exit reveals which entry
/// (or how much of a key) matched.
#[derive(Clone)]
pub struct ApiKeys {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeys")
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl ApiKeys {
    /// Parses a `HANDOFF_API_KEYS` value: comma-separated `tenant/subject[+role]...=KEY` or
    /// `tenant/subject[+role]...=sha256:HEX` entries (see the crate docs). Errors name the
    /// entry by its 1-based position, never the key.
    pub fn parse(spec: &str) -> Result<ApiKeys, AuthConfigError> {
        let mut entries: Vec<Entry> = Vec::new();
        for (index, raw) in spec.split(',').enumerate() {
            let raw = raw.trim();
            if raw.is_empty() {
                continue;
            }
            let entry = parse_entry(raw).map_err(|reason| AuthConfigError::ApiKeyEntry {
                index: index + 1,
                reason,
            })?;
            if let Some(earlier) = entries.iter().position(|e| e.digest == entry.digest) {
                return Err(AuthConfigError::ApiKeyEntry {
                    index: index + 1,
                    reason: format!("has the same key as an earlier entry ({})", earlier + 1),
                });
            }
            entries.push(entry);
        }
        if entries.is_empty() {
            return Err(AuthConfigError::Invalid {
                var: vars::API_KEYS,
                reason: "has no entries".to_owned(),
            });
        }
        Ok(ApiKeys { entries })
    }

    /// How many keys are configured.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Never true for a parsed value (parsing refuses an empty list).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn lookup(&self, key: &str) -> Option<&Principal> {
        let presented: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        let mut found = subtle::Choice::from(0);
        let mut index = 0u64;
        for (i, entry) in self.entries.iter().enumerate() {
            let equal = presented.ct_eq(&entry.digest);
            index = u64::conditional_select(&index, &(i as u64), equal);
            found |= equal;
        }
        bool::from(found).then(|| &self.entries[index as usize].principal)
    }
}

fn parse_entry(raw: &str) -> Result<Entry, String> {
    let (identity, key) = raw
        .split_once('=')
        .ok_or("expected tenant/subject=KEY or tenant/subject=sha256:HEX")?;
    let mut parts = identity.trim().split('+');
    let who = parts.next().unwrap_or_default();
    let roles: Vec<String> = parts.map(|r| r.trim().to_owned()).collect();
    if roles
        .iter()
        .any(|r| r.is_empty() || r.chars().any(char::is_control))
    {
        return Err("has an empty or invalid role after `+`".to_owned());
    }
    let (tenant, subject) = who
        .split_once('/')
        .ok_or("expected tenant/subject before `=`")?;
    let principal =
        checked_principal(Some(tenant.trim()), subject.trim(), roles).map_err(|e| match e {
            AuthError::Unauthenticated(m) | AuthError::Unavailable(m) => m,
        })?;
    let key = key.trim();
    let digest = match key.strip_prefix("sha256:") {
        Some(hex) => parse_hex_digest(hex).ok_or("sha256: must be followed by 64 hex digits")?,
        None if key.is_empty() => return Err("has an empty key".to_owned()),
        None => Sha256::digest(key.as_bytes()).into(),
    };
    Ok(Entry { principal, digest })
}

fn parse_hex_digest(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    // Checked first: from_str_radix would also accept a `+` sign.
    if bytes.len() != 64 || !bytes.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let pair = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

impl Authenticator for ApiKeys {
    fn authenticate<'a>(
        &'a self,
        request: &'a Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let result = match bearer_token(request) {
            None => Err(AuthError::unauthenticated(
                "this endpoint expects an API key: Authorization: Bearer <key>",
            )),
            Some(key) => self
                .lookup(key)
                .cloned()
                .ok_or_else(|| AuthError::unauthenticated("unknown API key")),
        };
        Box::pin(futures::future::ready(result))
    }

    fn challenge(&self) -> String {
        CHALLENGE.to_owned()
    }

    fn scheme(&self) -> &'static str {
        "api-key"
    }
}
