//! Rate limits and token budgets that hold across instances: kept in the store, checked
//! by the engine before a run claims anything and by agents before each model call.
//!
//! - **Rate limit** (per principal, [`EngineConfig::rate_limit`](crate::EngineConfig)):
//!   runs started, a token bucket of capacity `count` refilled evenly over `window`. A
//!   request over it is refused before anything is claimed: [`CoreError::RateLimited`].
//! - **Token budget** (per tenant, [`EngineConfig::token_budget`](crate::EngineConfig)):
//!   model tokens (input plus output) per fixed window aligned to the Unix epoch (a `day`
//!   is a UTC day), exhausted when used ≥ `count`. A new run is refused
//!   ([`CoreError::BudgetExceeded`]); a run in progress ends at its next model call
//!   ([`RunContext::check_budget`](crate::RunContext::check_budget)) with `RUN_ERROR`
//!   `BUDGET_EXCEEDED` and the usage so far.
//!
//! Both are written `COUNT/WINDOW`, WINDOW one of `s`, `min`, `h`, `day`, optionally with
//! a number in front:
//!
//! ```
//! use handoff_core::limits::Quota;
//!
//! let quota: Quota = "3/10s".parse().unwrap();
//! assert_eq!((quota.count, quota.window_ms), (3, 10_000));
//! assert_eq!("200000/day".parse::<Quota>().unwrap().window_ms, 86_400_000);
//! assert!("60/week".parse::<Quota>().is_err());
//! ```
//!
//! Store cost: a run start reads and conditionally writes its principal's bucket (2 round
//! trips) and reads its tenant's budget window (1); a model call adds the tokens of the
//! calls since the last one to the window (a read and a conditional write, 2) and checks
//! the total; the run's end adds what is left (2). Records live in one partition per
//! tenant and expire on their own.

mod store;

pub(crate) use store::{RunLimits, settle_budget, take_run};

/// `COUNT` per `WINDOW`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// How many (runs, tokens) per window; at least 1.
    pub count: u64,
    /// The window, in milliseconds; at least 1 s.
    pub window_ms: u64,
}

impl Quota {
    /// The window in whole seconds (rounded up), as HTTP headers carry it.
    pub fn window_secs(&self) -> u64 {
        self.window_ms.div_ceil(1000)
    }
}

impl std::str::FromStr for Quota {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{value:?} is not COUNT/WINDOW (e.g. 60/min, 3/10s, 200000/day)");
        let (count, window) = value.trim().split_once('/').ok_or_else(bad)?;
        let count: u64 = count.trim().parse().map_err(|_| bad())?;
        let window = window.trim();
        let unit_at = window.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (times, unit) = window.split_at(unit_at);
        let times: u64 = if times.is_empty() {
            1
        } else {
            times.parse().map_err(|_| bad())?
        };
        let unit_ms: u64 = match unit {
            "s" => 1_000,
            "min" => 60_000,
            "h" => 3_600_000,
            "day" => 86_400_000,
            _ => return Err(bad()),
        };
        if count == 0 || times == 0 {
            return Err(format!("{value:?}: COUNT and WINDOW must be positive"));
        }
        let window_ms = times.checked_mul(unit_ms).ok_or_else(bad)?;
        Ok(Quota { count, window_ms })
    }
}

impl std::fmt::Display for Quota {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}s", self.count, self.window_secs())
    }
}

#[cfg(test)]
mod tests;
