//! SHA-256 digests, constant-time comparison, and the compact JSON form that
//! `request_body_sha256` claims hash.

use std::fmt::{self, Write as _};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Constant-time equality of two strings (the length is not secret).
pub(crate) fn ct_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Whether `secret` hashes to `expected_sha256_hex`, comparing digests in constant time.
pub(crate) fn secret_matches(secret: &str, expected_sha256_hex: &str) -> bool {
    ct_eq(&sha256_hex(secret.as_bytes()), expected_sha256_hex)
}

/// The body as Python's `json.dumps(body, separators=(",", ":"), ensure_ascii=False)`
/// writes it: the form the A2A samples hash into `request_body_sha256`.
///
/// Member order and duplicate-key handling follow Python dicts (document order,
/// a repeated key keeps its first position and its last value); strings use
/// Python's escapes; integers are written as read; floats as Python's `repr`.
/// `None` when the body is not JSON. Known gaps, where only the raw-body digest
/// can match: integers beyond 64 bits (read as floats) and `-0` (read as `-0.0`).
pub(crate) fn python_compact_json(body: &[u8]) -> Option<String> {
    let node: Node = serde_json::from_slice(body).ok()?;
    let mut out = String::with_capacity(body.len());
    node.write(&mut out);
    Some(out)
}

enum Node {
    Null,
    Bool(bool),
    Int(String),
    Float(f64),
    Str(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    fn write(&self, out: &mut String) {
        match self {
            Node::Null => out.push_str("null"),
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Node::Int(text) => out.push_str(text),
            Node::Float(f) => out.push_str(&python_float_repr(*f)),
            Node::Str(s) => write_python_string(s, out),
            Node::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Node::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_python_string(key, out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_python_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Python's `repr(float)`: shortest round-trip digits, positional for decimal
/// exponents in [-4, 16), else `d.ddde±XX`.
fn python_float_repr(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            out.push_str(&digits);
        } else {
            let point = point.unsigned_abs() as usize;
            if point >= digits.len() {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', point - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.unsigned_abs()
        );
    }
    out
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut members: Vec<(String, Node)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Node>()? {
            match members.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => members.push((key, value)),
            }
        }
        Ok(Node::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(secret_matches("abc", &sha256_hex(b"abc")));
        assert!(!secret_matches("abd", &sha256_hex(b"abc")));
        assert!(!ct_eq("a", "ab"));
    }

    #[test]
    fn compact_json_matches_python() {
        // Expected strings are what CPython 3 prints for
        // json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).
        let cases = [
            (
                r#"{ "b": 1, "a": [true, null] }"#,
                r#"{"b":1,"a":[true,null]}"#,
            ),
            (r#"{"x": "é\u00e9\n\u0001\/"}"#, "{\"x\":\"éé\\n\\u0001/\"}"),
            (r#"{"a": 1, "a": 2, "b": 3}"#, r#"{"a":2,"b":3}"#),
            (
                r#"[1.0, 1e2, 1.5e-7, 0.0001, 1e16, 123.456, -0.0, 2.5E+20, 9999999999999998.0]"#,
                "[1.0,100.0,1.5e-07,0.0001,1e+16,123.456,-0.0,2.5e+20,9999999999999998.0]",
            ),
            (
                r#"[10, -7, 18446744073709551615]"#,
                "[10,-7,18446744073709551615]",
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(
                python_compact_json(body.as_bytes()).as_deref(),
                Some(expected),
                "{body}"
            );
        }
        assert_eq!(python_compact_json(b"{nope"), None);
    }
}
