//! The invocation's deadline, as the engine's.

/// Lambda's deadline is Unix milliseconds. The local emulator (`cargo lambda
/// watch`) sends the timeout itself (e.g. 600000); a value that small cannot be an
/// instant in this century, so it is read as "this many ms from now".
pub(super) fn absolute_deadline(raw: u64, now_ms: u64) -> u64 {
    const YEAR_2001_MS: u64 = 978_307_200_000;
    if raw < YEAR_2001_MS {
        now_ms.saturating_add(raw)
    } else {
        raw
    }
}

/// `HANDOFF_RUN_BUDGET_MS`: how long a run may use of an invocation, at most (unset: until
/// its deadline). A run past it ends as at the deadline: a background run or a re-drive is
/// handed over to the next scheduled invocation, a streamed one ends `cancelled`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RunBudget(Option<u64>);

impl RunBudget {
    pub(super) fn from_env(env: impl Fn(&str) -> Option<String>) -> Self {
        RunBudget(env("HANDOFF_RUN_BUDGET_MS").and_then(|v| v.trim().parse().ok()))
    }

    /// The invocation's `deadline`, or sooner when the budget ends first.
    pub(super) fn within(self, deadline: u64, now_ms: u64) -> u64 {
        self.0.map_or(deadline, |budget| {
            deadline.min(now_ms.saturating_add(budget))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_brings_the_deadline_forward_never_back() {
        let budget = RunBudget::from_env(|_| Some("5000".into()));
        assert_eq!(budget.within(100_000, 1_000), 6_000);
        assert_eq!(budget.within(3_000, 1_000), 3_000);
        assert_eq!(RunBudget::from_env(|_| None).within(3_000, 1_000), 3_000);
    }

    #[test]
    fn the_emulators_relative_deadline_becomes_absolute() {
        assert_eq!(
            absolute_deadline(600_000, 1_800_000_000_000),
            1_800_000_600_000
        );
        assert_eq!(
            absolute_deadline(1_800_000_900_000, 1_800_000_000_000),
            1_800_000_900_000
        );
    }
}
