//! Token usage of a run, one entry per (provider, model), as AG-UI reports it on
//! `RUN_FINISHED` and `RUN_ERROR`.

use agui_protocol::TokenUsage;

use super::RunContext;
use crate::codes;
use crate::error::AgentError;
use crate::limits;

impl RunContext {
    /// Adds a model call's usage to the run's: calls of the same provider and model add
    /// up, each count summed where reported (a count no call reported stays absent, never
    /// 0). The engine puts the total on the run's `RUN_FINISHED` or `RUN_ERROR`, so a run
    /// that fails after some calls still reports them: record each call as it ends.
    pub fn record_usage(&mut self, usage: TokenUsage) {
        let tokens = usage.total_tokens.unwrap_or_else(|| {
            usage
                .input_tokens
                .unwrap_or(0)
                .saturating_add(usage.output_tokens.unwrap_or(0))
        });
        self.unsettled_tokens = self.unsettled_tokens.saturating_add(tokens);
        match self
            .usage
            .iter_mut()
            .find(|u| u.provider == usage.provider && u.model == usage.model)
        {
            Some(total) => total.add(&usage),
            None => self.usage.push(usage),
        }
    }

    /// Call before each model call: adds the tokens recorded since the last check to the
    /// tenant's budget window (`HANDOFF_TOKEN_BUDGET`) and refuses the call once the window
    /// is spent: the error ends the run with `RUN_ERROR{code: "BUDGET_EXCEEDED"}` and the
    /// usage so far. Free without a budget, and when nothing was recorded since the last
    /// check (the run's start checked the window). A store that cannot be reached lets
    /// the call go (the tokens are added at the next check).
    pub async fn check_budget(&mut self) -> Result<(), AgentError> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        if self.unsettled_tokens == 0 {
            return Ok(());
        }
        let now = self.now_ms();
        let tokens = self.unsettled_tokens;
        let tenant = self.principal.tenant.clone();
        match limits::settle_budget(self.store.as_ref(), &tenant, &budget, tokens, now).await {
            Ok(used) => {
                self.unsettled_tokens = 0;
                if used >= budget.count {
                    let message = format!("the token budget of {budget} is spent");
                    return Err(self.fail_with(codes::BUDGET_EXCEEDED, message, true, "budget"));
                }
                Ok(())
            }
            Err(error) => {
                tracing::warn!(%error, "token budget not updated; the model call goes ahead");
                Ok(())
            }
        }
    }

    /// At the run's end: adds the tokens recorded since the last check to the budget.
    pub(crate) async fn settle_budget(&mut self) {
        let (Some(budget), tokens) = (self.budget, self.unsettled_tokens) else {
            return;
        };
        if tokens == 0 {
            return;
        }
        let now = self.now_ms();
        let tenant = self.principal.tenant.clone();
        match limits::settle_budget(self.store.as_ref(), &tenant, &budget, tokens, now).await {
            Ok(_) => self.unsettled_tokens = 0,
            Err(error) => tracing::warn!(%error, tokens, "token budget not updated"),
        }
    }

    /// The usage recorded so far.
    pub fn usage(&self) -> &[TokenUsage] {
        &self.usage
    }

    /// What the run's terminal event reports: `None` when no call was recorded.
    pub(crate) fn usage_report(&self) -> Option<Vec<TokenUsage>> {
        (!self.usage.is_empty()).then(|| self.usage.clone())
    }
}
