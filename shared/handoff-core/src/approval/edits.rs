//! Edit rules: an `editedArgs` answer against the arguments the tool call proposed.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::{ApprovalPolicy, EditRule};

/// `Err` names the first argument whose change the policy does not allow.
pub(super) fn check(
    policy: &ApprovalPolicy,
    original: Option<&Value>,
    edited: &Value,
) -> Result<(), String> {
    let edited = edited
        .as_object()
        .ok_or("editedArgs must be an object (it replaces the arguments)")?;
    let empty = Map::new();
    let original = match original {
        Some(Value::Object(map)) => map,
        // Nothing to compare with: only an edit that changes nothing could be allowed,
        // and there is no telling which one that is.
        _ if edited.is_empty() && policy.edits.is_empty() => &empty,
        _ => return Err("the proposed arguments are unknown, so no edit can be allowed".into()),
    };
    let names = original
        .keys()
        .chain(edited.keys().filter(|k| !original.contains_key(*k)));
    for name in names {
        let (before, after) = (original.get(name), edited.get(name));
        if before == after {
            continue;
        }
        let rule = policy.edits.get(name).copied().unwrap_or(EditRule::Fixed);
        allowed(rule, before, after).map_err(|why| format!("editedArgs.{name}: {why}"))?;
    }
    Ok(())
}

fn allowed(rule: EditRule, before: Option<&Value>, after: Option<&Value>) -> Result<(), String> {
    let bound = |want: Ordering, words: &str| match (before, after) {
        (Some(Value::Number(b)), Some(Value::Number(a))) => {
            // A tool taking whole units (cents, a count) must not get a fraction or a
            // float that only looks whole.
            if !b.is_f64() && a.is_f64() {
                return Err(format!("must stay a whole number (proposed {b}, got {a})"));
            }
            // Lowering an amount to below zero turns it around (a refund becomes a
            // charge): a bound from a proposal of zero or more keeps the edit there.
            if !is_negative(b) && is_negative(a) {
                return Err(format!("may not go below zero (proposed {b}, got {a})"));
            }
            match compare(a, b) {
                Some(order) if order == want || order == Ordering::Equal => Ok(()),
                _ => Err(format!("may only {words} (proposed {b}, got {a})")),
            }
        }
        _ => Err(format!("may only {words} a number, and must stay present")),
    };
    match rule {
        EditRule::Any => Ok(()),
        EditRule::Fixed => Err(match before {
            Some(value) => format!("is fixed by the approval policy (proposed {value})"),
            None => "is not an argument of the proposed call".to_owned(),
        }),
        EditRule::AtMostOriginal => bound(Ordering::Less, "decrease"),
        EditRule::AtLeastOriginal => bound(Ordering::Greater, "increase"),
    }
}

fn is_negative(n: &serde_json::Number) -> bool {
    n.as_f64().is_some_and(|v| v < 0.0)
}

/// Exact for integers (no rounding through f64), numeric otherwise.
fn compare(a: &serde_json::Number, b: &serde_json::Number) -> Option<Ordering> {
    let int = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refund() -> ApprovalPolicy {
        ApprovalPolicy::new()
            .fixed("orderId")
            .at_most_original("amountCents")
    }

    #[test]
    fn an_unchanged_answer_passes_any_policy() {
        let args = json!({"orderId": "A1", "amountCents": 500});
        assert!(check(&ApprovalPolicy::new(), Some(&args), &args).is_ok());
    }

    #[test]
    fn lowering_the_amount_of_the_same_order_is_allowed() {
        let args = json!({"orderId": "A1", "amountCents": 500});
        let edited = json!({"orderId": "A1", "amountCents": 120});
        assert!(check(&refund(), Some(&args), &edited).is_ok());
    }

    #[test]
    fn another_order_or_a_higher_amount_is_refused_naming_the_argument() {
        let args = json!({"orderId": "A1", "amountCents": 500});
        let other = check(
            &refund(),
            Some(&args),
            &json!({"orderId": "Z9", "amountCents": 500}),
        );
        assert!(other.unwrap_err().contains("editedArgs.orderId"));
        let more = check(
            &refund(),
            Some(&args),
            &json!({"orderId": "A1", "amountCents": 99999999}),
        );
        assert!(
            more.unwrap_err()
                .contains("editedArgs.amountCents: may only decrease")
        );
    }

    #[test]
    fn unlisted_added_or_removed_arguments_are_fixed() {
        let args = json!({"orderId": "A1", "amountCents": 500, "currency": "EUR"});
        let added = json!({"orderId": "A1", "amountCents": 500, "currency": "EUR", "to": "x"});
        assert!(check(&refund(), Some(&args), &added).is_err());
        let removed = json!({"orderId": "A1", "amountCents": 500});
        assert!(check(&refund(), Some(&args), &removed).is_err());
        let changed = json!({"orderId": "A1", "amountCents": 500, "currency": "USD"});
        assert!(check(&refund(), Some(&args), &changed).is_err());
        // A bounded number must stay a number.
        let gone = json!({"orderId": "A1", "currency": "EUR"});
        assert!(check(&refund(), Some(&args), &gone).is_err());
    }

    #[test]
    fn without_the_proposal_no_edit_is_allowed() {
        let edited = json!({"orderId": "A1", "amountCents": 1});
        assert!(check(&refund(), None, &edited).is_err());
        assert!(check(&refund(), None, &json!("A1")).is_err());
    }

    /// Before, `-1e9` lowered a refund of 500 (to a charge) and `4.5` cents passed.
    #[test]
    fn a_bounded_edit_keeps_a_whole_number_whole_and_stays_at_or_above_zero() {
        let args = json!({"orderId": "A1", "amountCents": 500});
        let edit = |cents: Value| json!({"orderId": "A1", "amountCents": cents});
        for cents in [json!(-1e9), json!(-1), json!(i64::MIN)] {
            let refused = check(&refund(), Some(&args), &edit(cents.clone()));
            assert!(
                refused.is_err_and(|e| e.contains("editedArgs.amountCents")),
                "{cents}"
            );
        }
        let below = check(&refund(), Some(&args), &edit(json!(-1))).unwrap_err();
        assert!(below.contains("may not go below zero"), "{below}");
        for cents in [json!(4.5), json!(5.0), json!(500.0)] {
            let refused = check(&refund(), Some(&args), &edit(cents.clone())).unwrap_err();
            assert!(
                refused.contains("must stay a whole number"),
                "{cents}: {refused}"
            );
        }
        assert!(check(&refund(), Some(&args), &edit(json!(0))).is_ok());
        let at_least = ApprovalPolicy::new().at_least_original("n");
        let whole = json!({"n": 5});
        assert!(check(&at_least, Some(&whole), &json!({"n": 6.0})).is_err());
        assert!(check(&at_least, Some(&whole), &json!({"n": 6})).is_ok());

        // A fractional proposal may be edited to any number within the bound; one below
        // zero may go further below.
        let at_most = ApprovalPolicy::new().at_most_original("n");
        let rate = json!({"n": 2.5});
        assert!(check(&at_most, Some(&rate), &json!({"n": 1.25})).is_ok());
        assert!(check(&at_most, Some(&rate), &json!({"n": 1})).is_ok());
        assert!(check(&at_most, Some(&rate), &json!({"n": -0.5})).is_err());
        let debt = json!({"n": -10});
        assert!(check(&at_most, Some(&debt), &json!({"n": -20})).is_ok());
    }

    #[test]
    fn integers_compare_exactly_beyond_f64_precision() {
        let policy = ApprovalPolicy::new().at_most_original("n");
        let big = json!({"n": 9_007_199_254_740_993_u64});
        let bigger = json!({"n": 9_007_199_254_740_994_u64});
        assert!(check(&policy, Some(&big), &bigger).is_err());
        let policy = ApprovalPolicy::new().at_least_original("n");
        assert!(check(&policy, Some(&big), &bigger).is_ok());
    }
}
