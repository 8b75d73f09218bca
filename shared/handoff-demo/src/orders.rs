//! A tiny simulated order catalog and the parsing of user requests.

use serde::Serialize;

/// An order as `get_order` returns it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// Order id, e.g. `A1024`.
    pub order_id: String,
    /// What was bought.
    pub item: String,
    /// Amount paid, in cents.
    pub amount_cents: u64,
    /// Currency.
    pub currency: &'static str,
}

impl Order {
    /// Looks up an order. Every well-formed id exists; amounts are deterministic.
    pub fn lookup(order_id: &str) -> Order {
        let (item, amount_cents) = match order_id {
            "A1024" => ("Wireless headphones".to_owned(), 12_800),
            other => {
                let seed: u64 = other.bytes().map(u64::from).sum();
                (
                    format!("Item #{}", seed % 97),
                    1_000 + (seed * 7919) % 40_000,
                )
            }
        };
        Order {
            order_id: order_id.to_owned(),
            item,
            amount_cents,
            currency: "USD",
        }
    }

    /// The amount as `128.00`.
    pub fn amount(&self) -> String {
        format_cents(self.amount_cents)
    }
}

/// Formats cents as a decimal amount.
pub fn format_cents(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// "Refund order A1024".
    Refund(String),
    /// "Return order A1024".
    Return(String),
    /// Anything else.
    Other,
}

/// Reads a request like `Refund order A1024` or `return order b77` (case-insensitive).
pub fn parse_request(text: &str) -> Request {
    let lower = text.to_ascii_lowercase();
    let Some(order_id) = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| is_order_id(w))
    else {
        return Request::Other;
    };
    let order_id = order_id.to_ascii_uppercase();
    if lower.contains("refund") {
        Request::Refund(order_id)
    } else if lower.contains("return") {
        Request::Return(order_id)
    } else {
        Request::Other
    }
}

fn is_order_id(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && word.len() >= 3
        && word.len() <= 12
        && chars.clone().count() >= 2
        && chars.all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests() {
        assert_eq!(
            parse_request("Refund order A1024"),
            Request::Refund("A1024".into())
        );
        assert_eq!(
            parse_request("please return order b77, it broke"),
            Request::Return("B77".into())
        );
        assert_eq!(parse_request("hello"), Request::Other);
        assert_eq!(parse_request("refund everything"), Request::Other);
    }

    #[test]
    fn known_order_matches_the_seed_example() {
        assert_eq!(Order::lookup("A1024").amount(), "128.00");
    }
}
