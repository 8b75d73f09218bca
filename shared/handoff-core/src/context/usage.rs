//! Token usage of a run, one entry per (provider, model), as AG-UI reports it on
//! `RUN_FINISHED` and `RUN_ERROR`.

use agui_protocol::TokenUsage;

use super::RunContext;

impl RunContext {
    /// Adds a model call's usage to the run's: calls of the same provider and model add
    /// up, each count summed where reported (a count no call reported stays absent, never
    /// 0). The engine puts the total on the run's `RUN_FINISHED` or `RUN_ERROR`, so a run
    /// that fails after some calls still reports them: record each call as it ends.
    pub fn record_usage(&mut self, usage: TokenUsage) {
        match self
            .usage
            .iter_mut()
            .find(|u| u.provider == usage.provider && u.model == usage.model)
        {
            Some(total) => add(total, &usage),
            None => self.usage.push(usage),
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

fn add(total: &mut TokenUsage, more: &TokenUsage) {
    let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    };
    total.input_tokens = sum(total.input_tokens, more.input_tokens);
    total.output_tokens = sum(total.output_tokens, more.output_tokens);
    total.total_tokens = sum(total.total_tokens, more.total_tokens);
    total.reasoning_tokens = sum(total.reasoning_tokens, more.reasoning_tokens);
    total.cached_input_tokens = sum(total.cached_input_tokens, more.cached_input_tokens);
    total.cache_write_input_tokens = sum(
        total.cache_write_input_tokens,
        more.cache_write_input_tokens,
    );
}
