//! The records behind [`Quota`]s: one partition per tenant holding its principals'
//! buckets and its budget windows, updated by compare-and-set.

use serde::{Deserialize, Serialize};

use super::Quota;
use crate::error::CoreError;
use crate::principal::Principal;
use crate::records::{decode, encode};
use crate::store::{Condition, Store, StoreError, Write};

/// Compare-and-set attempts before a contended counter answers "unavailable, retry".
const ATTEMPTS: usize = 16;

/// The quotas an engine enforces.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RunLimits {
    pub(crate) rate: Option<Quota>,
    pub(crate) budget: Option<Quota>,
}

/// A principal's bucket: its level in thousandths of a run, as of `at_ms`.
#[derive(Debug, Serialize, Deserialize)]
struct Bucket {
    milli: u64,
    at_ms: u64,
}

/// A tenant's tokens used in one budget window.
#[derive(Debug, Serialize, Deserialize)]
struct Window {
    used: u64,
}

fn partition(tenant: &str) -> String {
    format!("\u{1e}limits\u{1e}{tenant}")
}

fn bucket_key(subject: &str) -> String {
    format!("rate\u{1f}{subject}")
}

/// The budget window holding `now_ms` (aligned to the Unix epoch): its key and end.
fn window_of(budget: &Quota, now_ms: u64) -> (String, u64) {
    let start = now_ms - now_ms % budget.window_ms;
    (format!("budget\u{1f}{start}"), start + budget.window_ms)
}

/// Before a run claims anything: refuses it if the tenant's budget is spent
/// ([`CoreError::BudgetExceeded`]) or takes one run from the principal's bucket
/// ([`CoreError::RateLimited`] when it is empty).
pub(crate) async fn take_run(
    store: &dyn Store,
    principal: &Principal,
    limits: RunLimits,
    now_ms: u64,
) -> Result<(), CoreError> {
    if let Some(budget) = limits.budget {
        let used = add_tokens(store, &principal.tenant, &budget, 0, now_ms).await?;
        if used >= budget.count {
            let (_, end) = window_of(&budget, now_ms);
            return Err(CoreError::BudgetExceeded {
                retry_after_ms: end - now_ms,
            });
        }
    }
    if let Some(rate) = limits.rate {
        take_token(store, principal, &rate, now_ms).await?;
    }
    Ok(())
}

/// Adds `tokens` to the tenant's current budget window and answers its total (a read
/// only when `tokens` is 0).
pub(crate) async fn settle_budget(
    store: &dyn Store,
    tenant: &str,
    budget: &Quota,
    tokens: u64,
    now_ms: u64,
) -> Result<u64, CoreError> {
    add_tokens(store, tenant, budget, tokens, now_ms).await
}

async fn add_tokens(
    store: &dyn Store,
    tenant: &str,
    budget: &Quota,
    tokens: u64,
    now_ms: u64,
) -> Result<u64, CoreError> {
    let partition = partition(tenant);
    let (key, end) = window_of(budget, now_ms);
    for _ in 0..ATTEMPTS {
        let current = store.get_one(&partition, &key, now_ms).await?;
        let used = match &current {
            Some(item) => decode::<Window>(item)?.used,
            None => 0,
        };
        if tokens == 0 {
            return Ok(used);
        }
        let condition = current.map_or(Condition::Absent, |i| Condition::Version(i.version));
        let total = used.saturating_add(tokens);
        let write = Write::put(&key, condition, encode(&Window { used: total }), Some(end));
        match store.commit(&partition, vec![write], now_ms).await {
            Ok(()) => return Ok(total),
            // Another instance moved the counter first: read it again.
            Err(StoreError::ConditionFailed { .. }) => {}
            Err(other) => return Err(other.into()),
        }
    }
    Err(contended())
}

async fn take_token(
    store: &dyn Store,
    principal: &Principal,
    rate: &Quota,
    now_ms: u64,
) -> Result<(), CoreError> {
    let partition = partition(&principal.tenant);
    let key = bucket_key(&principal.subject);
    let capacity = u128::from(rate.count) * 1000;
    let window = u128::from(rate.window_ms);
    // Milli-runs refilled over `ms`, and the ms until `milli` more are in (rounded up).
    let refill = |ms: u64| u128::from(ms) * capacity / window;
    let wait = |milli: u128| u64::try_from((milli * window).div_ceil(capacity)).unwrap_or(u64::MAX);
    for _ in 0..ATTEMPTS {
        let current = store.get_one(&partition, &key, now_ms).await?;
        let level = match &current {
            // An absent (or expired) bucket is full: a whole window has passed.
            None => capacity,
            Some(item) => {
                let bucket: Bucket = decode(item)?;
                let elapsed = now_ms.saturating_sub(bucket.at_ms);
                (u128::from(bucket.milli) + refill(elapsed)).min(capacity)
            }
        };
        if level < 1000 {
            return Err(CoreError::RateLimited {
                quota: *rate,
                remaining: 0,
                retry_after_ms: wait(1000 - level).max(1),
                reset_ms: wait(capacity - level),
            });
        }
        let left = level - 1000;
        let bucket = Bucket {
            milli: u64::try_from(left).unwrap_or(u64::MAX),
            at_ms: now_ms,
        };
        let condition = current.map_or(Condition::Absent, |i| Condition::Version(i.version));
        // Past a window the bucket is full again, which is what an absent one reads as.
        let expires = now_ms.saturating_add(rate.window_ms);
        let write = Write::put(&key, condition, encode(&bucket), Some(expires));
        match store.commit(&partition, vec![write], now_ms).await {
            Ok(()) => return Ok(()),
            // Another instance moved the counter first: read it again.
            Err(StoreError::ConditionFailed { .. }) => {}
            Err(other) => return Err(other.into()),
        }
    }
    Err(contended())
}

fn contended() -> CoreError {
    CoreError::Store(StoreError::Unavailable(
        "a limit's counter is contended; retry".to_owned(),
    ))
}
