//! The stored schedules, their due index, and the claim of a tick (see the module docs).

use super::{Schedule, Tick, TickRun, tick_thread};
use crate::codes;
use crate::error::CoreError;
use crate::store::{Condition, IndexEntry, Item, MAX_INDEX_RANK, Store, StoreError, Write};

/// The listing of every schedule across tenants, soonest due first (rank: the highest
/// rank every store keeps exactly minus the next-due time).
pub const DUE_SCOPE: &str = "\u{1f}schedules-due";
/// The most schedules a tenant keeps.
pub const MAX_PER_TENANT: usize = 100;
/// Key prefix of a schedule in its tenant's partition.
const PREFIX: &str = "schedule#";

/// The partition of `tenant`'s schedules (control characters keep it apart from every
/// thread partition, whose ids refuse them).
fn partition(tenant: &str) -> String {
    format!("\u{1e}schedules\u{1e}{tenant}")
}

fn key(id: &str) -> String {
    format!("{PREFIX}{id}")
}

/// The put of `schedule` under `condition`, listed in the due index at its next tick.
fn write(schedule: &Schedule, condition: Condition) -> Write {
    let bytes = serde_json::to_vec(schedule).unwrap_or_default();
    Write::put(key(&schedule.id), condition, bytes, None).indexed(IndexEntry {
        scope: DUE_SCOPE.to_owned(),
        rank: MAX_INDEX_RANK.saturating_sub(schedule.next_due_ms),
    })
}

fn decode(item: &Item) -> Option<Schedule> {
    serde_json::from_slice(&item.value).ok()
}

/// Stores a new schedule of `schedule.owner`'s tenant: 409 `SCHEDULE_LIMIT` past
/// [`MAX_PER_TENANT`].
pub async fn create(store: &dyn Store, schedule: &Schedule, now_ms: u64) -> Result<(), CoreError> {
    let partition = partition(&schedule.owner.tenant);
    let count = store.list(&partition, PREFIX, now_ms).await?.len();
    if count >= MAX_PER_TENANT {
        return Err(CoreError::Reported {
            code: codes::SCHEDULE_LIMIT,
            message: format!("a tenant keeps at most {MAX_PER_TENANT} schedules"),
            retryable: false,
        });
    }
    match store
        .commit(&partition, vec![write(schedule, Condition::Absent)], now_ms)
        .await
    {
        Err(StoreError::ConditionFailed { .. }) => Err(super::invalid(format!(
            "a schedule {} exists already",
            schedule.id
        ))),
        other => Ok(other?),
    }
}

/// Every schedule of `tenant`, oldest first.
pub async fn list(
    store: &dyn Store,
    tenant: &str,
    now_ms: u64,
) -> Result<Vec<Schedule>, CoreError> {
    let items = store.scan(&partition(tenant), PREFIX, now_ms).await?;
    let mut schedules: Vec<Schedule> = items.iter().filter_map(decode).collect();
    schedules.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
    Ok(schedules)
}

/// Schedule `id` of `tenant`, if it exists.
pub async fn get(
    store: &dyn Store,
    tenant: &str,
    id: &str,
    now_ms: u64,
) -> Result<Option<Schedule>, CoreError> {
    let item = store.get_one(&partition(tenant), &key(id), now_ms).await?;
    Ok(item.as_ref().and_then(decode))
}

/// Removes schedule `id` of `tenant` (whatever ticks were claimed meanwhile: a run
/// already started goes on).
pub async fn delete(
    store: &dyn Store,
    tenant: &str,
    id: &str,
    now_ms: u64,
) -> Result<(), CoreError> {
    let write = Write::delete(key(id), Condition::Always);
    Ok(store
        .commit(&partition(tenant), vec![write], now_ms)
        .await?)
}

/// A schedule found due: what [`claim`] needs (the version it read).
#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    /// Its tenant's partition.
    pub partition: String,
    /// The version read.
    pub version: u64,
    /// The schedule as read.
    pub schedule: Schedule,
}

/// Up to `limit` schedules due at `now_ms`, soonest first: one index query, then one
/// read of each (a hit is a pointer; the item read decides).
pub async fn due(store: &dyn Store, now_ms: u64, limit: usize) -> Result<Vec<Due>, CoreError> {
    let hits = store.list_index(DUE_SCOPE, None, limit, now_ms).await?;
    let mut found = Vec::new();
    for hit in hits
        .iter()
        .take_while(|hit| MAX_INDEX_RANK.saturating_sub(hit.rank) <= now_ms)
    {
        let Some(item) = store.get_one(&hit.partition, &hit.key, now_ms).await? else {
            continue;
        };
        match decode(&item) {
            Some(schedule) if schedule.next_due_ms <= now_ms => found.push(Due {
                partition: hit.partition.clone(),
                version: item.version,
                schedule,
            }),
            Some(_) => {}
            None => tracing::warn!(key = %hit.key, "schedules: an unreadable schedule"),
        }
    }
    Ok(found)
}

/// Claims the due tick of `due` for run `run_id`: one write conditioned on the version
/// [`due`] read, moving the next-due time to the first tick after `now_ms` and recording
/// the run. `None`: another instance claimed it first (or the schedule changed or went).
pub async fn claim(
    store: &dyn Store,
    due: &Due,
    run_id: &str,
    now_ms: u64,
) -> Result<Option<Tick>, CoreError> {
    let mut schedule = due.schedule.clone();
    let tick_ms = schedule.next_due_ms;
    let run = TickRun {
        tick_ms,
        claimed_ms: now_ms,
        thread_id: tick_thread(&schedule, tick_ms, run_id),
        run_id: run_id.to_owned(),
    };
    schedule.next_due_ms = schedule.cadence.next_after(tick_ms, now_ms)?;
    schedule.ticks += 1;
    schedule.last_run = Some(run.clone());
    let cas = write(&schedule, Condition::Version(due.version));
    match store.commit(&due.partition, vec![cas], now_ms).await {
        Ok(()) => Ok(Some(Tick { schedule, run })),
        Err(StoreError::ConditionFailed { .. }) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// When the soonest schedule of any tenant is due (Unix ms; it may be past): one index
/// query, for a host that sets a timer (a Durable Object alarm). `None`: no schedule.
pub async fn next_due(store: &dyn Store, now_ms: u64) -> Result<Option<u64>, CoreError> {
    let hits = store.list_index(DUE_SCOPE, None, 1, now_ms).await?;
    Ok(hits
        .first()
        .map(|hit| MAX_INDEX_RANK.saturating_sub(hit.rank)))
}
