//! Building requests: condition and update expressions, the head item of a put.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use handoff_core::{Condition, StoreError};

use crate::codec::{B, Body, C, EXP, H, LO, LS, PK, TTL, V, W, Z, blob, key, num, s, ttl_seconds};

use super::plan::Plan;

/// Expression attribute names and values, collected while an expression is written.
#[derive(Default)]
pub(super) struct Expr {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expr {
    fn n(&mut self, attribute: &str) -> String {
        let placeholder = format!("#{attribute}");
        self.names.insert(placeholder.clone(), attribute.to_owned());
        placeholder
    }

    fn v(&mut self, name: &str, value: AttributeValue) -> String {
        let placeholder = format!(":{name}");
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    pub(super) fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    pub(super) fn values(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }

    /// The condition for `condition`, `None` for `Always`.
    ///
    /// - `Absent`: `attribute_not_exists(pk) OR exp <= :now`;
    /// - `Version(v)`: `v = :v AND (attribute_not_exists(exp) OR exp > :now)`.
    pub(super) fn condition(&mut self, condition: Condition, now_ms: u64) -> Option<String> {
        match condition {
            Condition::Always => None,
            Condition::Absent => {
                let (pk, exp, now) = (self.n(PK), self.n(EXP), self.v("now", num(now_ms)));
                Some(format!("attribute_not_exists({pk}) OR {exp} <= {now}"))
            }
            Condition::Version(version) => {
                let (v, exp) = (self.n(V), self.n(EXP));
                let (expected, now) = (self.v("v", num(version)), self.v("now", num(now_ms)));
                Some(format!(
                    "{v} = {expected} AND (attribute_not_exists({exp}) OR {exp} > {now})"
                ))
            }
        }
    }

    /// The condition of the "live" branch of an unconditional put: the item is absent or
    /// not expired (an expired item must restart at version 1, which the update's
    /// `if_not_exists` cannot tell), and was not written by this very put (a retried request
    /// that already applied).
    pub(super) fn live(&mut self, w: &str, now_ms: u64) -> String {
        let (pk, exp, wn) = (self.n(PK), self.n(EXP), self.n(W));
        let (now, wv) = (self.v("now", num(now_ms)), self.v("w", s(w)));
        format!(
            "(attribute_not_exists({pk}) OR attribute_not_exists({exp}) OR {exp} > {now}) \
             AND (attribute_not_exists({wn}) OR {wn} <> {wv})"
        )
    }

    /// `SET v = if_not_exists(v, 0) + 1, w, b | c h, [z], [exp ttl], [ls lo] REMOVE <the
    /// rest>`: the live version + 1, or 1 on an absent item (the update creates it).
    pub(super) fn update(&mut self, plan: &Plan) -> String {
        let mut set = Vec::new();
        let mut remove = Vec::new();
        let v = self.n(V);
        let (zero, one) = (self.v("zero", num(0)), self.v("one", num(1)));
        set.push(format!("{v} = if_not_exists({v}, {zero}) + {one}"));
        let (wn, wv) = (self.n(W), self.v("nw", s(plan.w.clone())));
        set.push(format!("{wn} = {wv}"));
        let mut attributes: Vec<(&str, Option<AttributeValue>)> = Vec::new();
        match plan.body() {
            Body::Inline(bytes) => {
                attributes.push((B, Some(blob(bytes))));
                attributes.push((C, None));
                attributes.push((H, None));
            }
            Body::Chunked { count, digest } => {
                attributes.push((B, None));
                attributes.push((C, Some(num(u64::from(count)))));
                attributes.push((H, Some(blob(digest))));
            }
        }
        attributes.push((Z, plan.packed.raw_len.map(num)));
        attributes.push((EXP, plan.exp.map(num)));
        attributes.push((TTL, plan.exp.map(|exp| num(ttl_seconds(exp)))));
        // Listed: set both index keys; not listed: remove them (the item leaves the index).
        let (ls, lo) = match &plan.listing {
            Some((ls, lo)) => (Some(s(ls.clone())), Some(s(lo.clone()))),
            None => (None, None),
        };
        attributes.push((LS, ls));
        attributes.push((LO, lo));
        for (attribute, value) in attributes {
            let name = self.n(attribute);
            match value {
                Some(value) => {
                    let placeholder = self.v(&format!("n{attribute}"), value);
                    set.push(format!("{name} = {placeholder}"));
                }
                None => remove.push(name),
            }
        }
        let mut expression = format!("SET {}", set.join(", "));
        if !remove.is_empty() {
            expression.push_str(&format!(" REMOVE {}", remove.join(", ")));
        }
        expression
    }
}

/// The full head item of a put at `version`.
pub(super) fn head_item(
    pk: &str,
    sk: &str,
    version: u64,
    plan: &Plan,
) -> HashMap<String, AttributeValue> {
    let mut item = key(pk, sk);
    item.insert(V.to_owned(), num(version));
    item.insert(W.to_owned(), s(plan.w.clone()));
    match plan.body() {
        Body::Inline(bytes) => {
            item.insert(B.to_owned(), blob(bytes));
        }
        Body::Chunked { count, digest } => {
            item.insert(C.to_owned(), num(u64::from(count)));
            item.insert(H.to_owned(), blob(digest));
        }
    }
    if let Some(raw_len) = plan.packed.raw_len {
        item.insert(Z.to_owned(), num(raw_len));
    }
    if let Some(exp) = plan.exp {
        item.insert(EXP.to_owned(), num(exp));
        item.insert(TTL.to_owned(), num(ttl_seconds(exp)));
    }
    if let Some((ls, lo)) = &plan.listing {
        item.insert(LS.to_owned(), s(ls.clone()));
        item.insert(LO.to_owned(), s(lo.clone()));
    }
    item
}

/// The version a put creates when sent as a full `Put` (not the live branch of `Always`).
pub(super) fn put_version(condition: Condition) -> Result<u64, StoreError> {
    match condition {
        Condition::Always | Condition::Absent => Ok(1),
        Condition::Version(v) => v
            .checked_add(1)
            .ok_or_else(|| StoreError::Backend(format!("version {v} cannot be incremented"))),
    }
}

pub(super) fn build_err(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("building {what}: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Packed;

    #[test]
    fn update_expression_sets_and_removes() {
        let plan = Plan {
            w: "w1".to_owned(),
            packed: Packed {
                bytes: b"x".to_vec(),
                raw_len: None,
            },
            exp: Some(1_500),
            chunked: None,
            listing: None,
        };
        let mut e = Expr::default();
        let update = e.update(&plan);
        assert_eq!(
            update,
            "SET #v = if_not_exists(#v, :zero) + :one, #w = :nw, #b = :nb, #exp = :nexp, \
             #ttl = :nttl REMOVE #c, #h, #z, #ls, #lo"
        );
        assert_eq!(e.values.get(":nttl"), Some(&num(2)));
        let condition = e.live("w1", 7);
        assert!(condition.contains("#w <> :w"));
        assert_eq!(e.names.len(), 11, "{:?}", e.names);
        assert!(!head_item("p", "k", 1, &plan).contains_key(LS));

        let listed = Plan {
            listing: Some(("scope".to_owned(), "order".to_owned())),
            exp: None,
            ..plan
        };
        let mut e = Expr::default();
        assert_eq!(
            e.update(&listed),
            "SET #v = if_not_exists(#v, :zero) + :one, #w = :nw, #b = :nb, #ls = :nls, \
             #lo = :nlo REMOVE #c, #h, #z, #exp, #ttl"
        );
        let item = head_item("p", "k", 1, &listed);
        assert_eq!(item.get(LS), Some(&s("scope")));
        assert_eq!(item.get(LO), Some(&s("order")));
    }

    #[test]
    fn conditions() {
        let mut e = Expr::default();
        assert_eq!(e.condition(Condition::Always, 1), None);
        assert_eq!(
            e.condition(Condition::Absent, 1).as_deref(),
            Some("attribute_not_exists(#pk) OR #exp <= :now")
        );
        assert_eq!(
            e.condition(Condition::Version(3), 1).as_deref(),
            Some("#v = :v AND (attribute_not_exists(#exp) OR #exp > :now)")
        );
    }
}
