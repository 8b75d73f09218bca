//! Reading and checking the audit trail ([`crate::records::audit`]): `GET /audit` and
//! `GET /audit/verify`, for principals holding role [`AUDITOR_ROLE`] in their tenant.

use serde::Serialize;

use super::Inner;
use super::cursor::{IndexPosition, ListCursor};
use crate::error::CoreError;
use crate::principal::Principal;
use crate::records::audit::{
    AUDIT_HEAD_KEY, AuditEntry, AuditHead, GENESIS_HASH, audit_entry_key, audit_scope,
};
use crate::records::decode;
use crate::store::IndexHit;

/// The role that may read and verify a tenant's audit trail.
pub const AUDITOR_ROLE: &str = "auditor";

/// Entries checked per `verify` call across a tenant (a larger trail is verified per thread).
const MAX_VERIFY_ENTRIES: usize = 100_000;

/// What `GET /audit` asks for.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    /// One thread's chain only.
    pub thread_id: Option<String>,
    /// Entries at or after this time (Unix ms).
    pub since_ms: Option<u64>,
    /// Page size, 1 to 100.
    pub limit: usize,
    /// Where the previous page ended.
    pub cursor: Option<String>,
}

/// A page of entries, newest first.
#[derive(Debug, Clone)]
pub struct AuditPage {
    /// The entries.
    pub entries: Vec<AuditEntry>,
    /// The next page's cursor.
    pub next_cursor: Option<String>,
}

/// What `GET /audit/verify` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditVerdict {
    /// Every chain checked is whole: each entry's hash matches its contents, links to the
    /// one before, sequence numbers have no gap and the head names the last one.
    pub intact: bool,
    /// Entries checked.
    pub entries: u64,
    /// The first entry (sequence number) where a chain breaks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_broken: Option<u64>,
    /// The thread of the first broken chain (a tenant-wide check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

fn require_auditor(principal: &Principal) -> Result<(), CoreError> {
    if principal.has_role(AUDITOR_ROLE) {
        return Ok(());
    }
    Err(CoreError::Forbidden(format!(
        "reading the audit trail needs role {AUDITOR_ROLE}"
    )))
}

/// A page of the tenant's entries (or one thread's), newest first.
pub(crate) async fn list(
    inner: &Inner,
    principal: &Principal,
    query: &AuditQuery,
) -> Result<AuditPage, CoreError> {
    require_auditor(principal)?;
    if !(1..=super::threads::MAX_LIMIT).contains(&query.limit) {
        return Err(CoreError::InvalidInput(format!(
            "limit must be between 1 and {}",
            super::threads::MAX_LIMIT
        )));
    }
    let scope = audit_scope(&principal.tenant);
    if let Some(thread_id) = &query.thread_id {
        let partition = principal.partition(thread_id)?;
        let cursors = ListCursor::new(inner, [scope.as_str(), "\u{1f}", &partition].concat());
        return list_thread(inner, &partition, &cursors, query).await;
    }
    let cursors = ListCursor::<IndexPosition>::new(inner, [scope.as_str(), "\u{1f}*"].concat());
    let opened = cursors.open(query.cursor.as_deref()).await?;
    let mut after = opened.map(|at| at.into_parts().0);
    let now = inner.runtime.now_ms();
    let since = query.since_ms.unwrap_or(0);
    let mut entries = Vec::new();
    loop {
        let hits = inner
            .store
            .list_index(&scope, after.as_ref(), 100, now)
            .await?;
        let exhausted = hits.len() < 100;
        for hit in hits {
            if hit.rank < since {
                return Ok(AuditPage {
                    entries,
                    next_cursor: None,
                });
            }
            if let Some(item) = inner.store.get_one(&hit.partition, &hit.key, now).await? {
                if entries.len() == query.limit {
                    // `after` is the last hit shown: the next page starts after it.
                    let next = match after {
                        Some(at) => Some(cursors.seal(&IndexPosition::new(at, 0)).await?),
                        None => None,
                    };
                    return Ok(AuditPage {
                        entries,
                        next_cursor: next,
                    });
                }
                entries.push(decode::<AuditEntry>(&item)?);
            }
            after = Some(hit);
        }
        if exhausted {
            return Ok(AuditPage {
                entries,
                next_cursor: None,
            });
        }
    }
}

/// A page of one thread's entries, newest (highest sequence number) first.
///
/// Read from the chain itself, not the tenant's listing: the head names the last sequence
/// number and entry keys follow from sequence numbers, so a page is one read of its keys
/// (and, without a cursor, one of the head), whatever the tenant's other threads hold.
/// Entries of one chain are appended in order by the runs holding the thread, so sequence
/// order is time order (as far as those instances' clocks agree) and `since` ends the
/// listing at the first older entry.
async fn list_thread(
    inner: &Inner,
    partition: &str,
    cursors: &ListCursor<'_, IndexPosition>,
    query: &AuditQuery,
) -> Result<AuditPage, CoreError> {
    let now = inner.runtime.now_ms();
    // The sequence number the page starts below. A cursor names the last entry shown, as
    // those of the tenant-listing reader did: one minted before an upgrade still opens.
    let below = match cursors.open(query.cursor.as_deref()).await? {
        Some(at) => entry_seq(&at.into_parts().0.key).ok_or(CoreError::InvalidCursor)?,
        None => match inner.store.get_one(partition, AUDIT_HEAD_KEY, now).await? {
            Some(item) => decode::<AuditHead>(&item)?.seq.saturating_add(1),
            None => 1,
        },
    };
    // One entry past the page, to know whether another page follows.
    let wanted = below.saturating_sub(1).min(query.limit as u64 + 1);
    let lowest = below - wanted;
    let keys: Vec<String> = (lowest..below).rev().map(audit_entry_key).collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let items = match refs.is_empty() {
        true => Vec::new(),
        false => inner.store.get(partition, &refs, now).await?,
    };
    let since = query.since_ms.unwrap_or(0);
    let mut entries: Vec<AuditEntry> = Vec::new();
    let mut last = None;
    // Whether entries older than the page remain (an entry missing from the chain, which
    // the verification reports, does not end the listing).
    let mut more = lowest > 1;
    for item in items.into_iter().flatten() {
        let entry = decode::<AuditEntry>(&item)?;
        if entry.time_ms < since {
            more = false;
            break;
        }
        if entries.len() == query.limit {
            more = true;
            break;
        }
        last = Some(IndexHit {
            rank: entry.time_ms,
            partition: partition.to_owned(),
            key: item.key,
        });
        entries.push(entry);
    }
    let next_cursor = match last {
        Some(at) if more && entries.len() == query.limit => {
            Some(cursors.seal(&IndexPosition::new(at, 0)).await?)
        }
        _ => None,
    };
    Ok(AuditPage {
        entries,
        next_cursor,
    })
}

/// The sequence number in an entry's key.
fn entry_seq(key: &str) -> Option<u64> {
    key.strip_prefix("audit#")?.parse().ok()
}

/// Checks one thread's chain, or every chain of the tenant.
pub(crate) async fn verify(
    inner: &Inner,
    principal: &Principal,
    thread_id: Option<&str>,
) -> Result<AuditVerdict, CoreError> {
    require_auditor(principal)?;
    let partitions = match thread_id {
        Some(thread_id) => vec![principal.partition(thread_id)?],
        None => chains_of(inner, &principal.tenant).await?,
    };
    let mut verdict = AuditVerdict {
        intact: true,
        entries: 0,
        first_broken: None,
        thread_id: None,
    };
    for partition in partitions {
        let (checked, broken) = verify_chain(inner, &partition).await?;
        verdict.entries += checked;
        if let Some(seq) = broken
            && verdict.intact
        {
            verdict.intact = false;
            verdict.first_broken = Some(seq);
            let (_, thread) = crate::principal::split_partition(&partition);
            verdict.thread_id = thread_id.is_none().then(|| thread.to_owned());
        }
    }
    Ok(verdict)
}

/// The partitions holding a chain in the tenant's listing.
async fn chains_of(inner: &Inner, tenant: &str) -> Result<Vec<String>, CoreError> {
    let scope = audit_scope(tenant);
    let now = inner.runtime.now_ms();
    let mut partitions = std::collections::BTreeSet::new();
    let mut after = None;
    let mut seen = 0;
    loop {
        let hits = inner
            .store
            .list_index(&scope, after.as_ref(), 100, now)
            .await?;
        let exhausted = hits.len() < 100;
        seen += hits.len();
        for hit in hits {
            partitions.insert(hit.partition.clone());
            after = Some(hit);
        }
        if exhausted || seen >= MAX_VERIFY_ENTRIES {
            return Ok(partitions.into_iter().collect());
        }
    }
}

/// Entries checked, and the first broken sequence number.
async fn verify_chain(inner: &Inner, partition: &str) -> Result<(u64, Option<u64>), CoreError> {
    let now = inner.runtime.now_ms();
    let keys = inner.store.list(partition, "audit#", now).await?;
    let head = match inner.store.get_one(partition, AUDIT_HEAD_KEY, now).await? {
        Some(item) => Some(decode::<AuditHead>(&item)?),
        None => None,
    };
    let mut expected_seq = 1;
    let mut prev = GENESIS_HASH.to_owned();
    let mut checked = 0;
    for chunk in keys.chunks(100) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        let items = inner.store.get(partition, &refs, now).await?;
        for (key, item) in chunk.iter().zip(items) {
            let Some(item) = item else { continue };
            checked += 1;
            let Ok(entry) = decode::<AuditEntry>(&item) else {
                return Ok((checked, Some(expected_seq)));
            };
            let intact = *key == audit_entry_key(entry.seq)
                && entry.seq == expected_seq
                && entry.prev_hash == prev
                && entry.hash == entry.compute_hash();
            if !intact {
                return Ok((checked, Some(expected_seq)));
            }
            prev = entry.hash;
            expected_seq += 1;
        }
    }
    let last = expected_seq - 1;
    let head_matches = match &head {
        Some(head) => head.seq == last && head.hash == prev,
        None => last == 0,
    };
    // Entries cut from the end: the head still names the last one written.
    Ok((checked, (!head_matches).then_some(last + 1)))
}
