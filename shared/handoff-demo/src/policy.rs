//! The refund's approval policy: one rule for the scripted demo and the LLM mode.

use handoff_core::ApprovalPolicy;

use crate::DemoConfig;

/// Who may approve a refund of `amount_cents` and how they may edit it: an edit may only
/// lower `amountCents` of the same `orderId` (every other argument stays as proposed);
/// above `DEMO_APPROVER_ABOVE_CENTS` the approver needs the role `approver` and may not
/// be the requester (four eyes).
pub fn refund_policy(config: &DemoConfig, amount_cents: u64) -> ApprovalPolicy {
    let policy = ApprovalPolicy::new()
        .fixed("orderId")
        .at_most_original("amountCents");
    if config
        .approver_above_cents
        .is_some_and(|limit| amount_cents > limit)
    {
        policy.role("approver").not_requester()
    } else {
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_eyes_only_above_the_limit_and_edits_bounded_always() {
        let config = DemoConfig {
            approver_above_cents: Some(1_000),
            ..DemoConfig::default()
        };
        let small = refund_policy(&config, 1_000);
        assert!(small.roles.is_empty() && !small.not_requester);
        let large = refund_policy(&config, 1_001);
        assert_eq!(large.roles, ["approver"]);
        assert!(large.not_requester);
        for policy in [small, large] {
            assert_eq!(policy.edits.len(), 2, "{policy:?}");
        }
        assert!(
            refund_policy(&DemoConfig::default(), u64::MAX)
                .roles
                .is_empty()
        );
    }
}
