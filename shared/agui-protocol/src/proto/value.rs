//! `google.protobuf.Value`/`Struct`/`ListValue`, and reading fields off an
//! event's JSON form the way the official encoder reads them off its object.

use serde_json::{Map, Value as Json};

/// `google.protobuf.Value`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Value {
    #[prost(oneof = "Kind", tags = "1, 2, 3, 4, 5, 6")]
    pub(crate) kind: Option<Kind>,
}

/// The arm of a [`Value`]. Oneof arms are written even when zero, so `null`,
/// `0`, `false` and `""` all stay distinguishable from absence.
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Kind {
    #[prost(int32, tag = "1")]
    Null(i32),
    #[prost(double, tag = "2")]
    Number(f64),
    #[prost(string, tag = "3")]
    String(String),
    #[prost(bool, tag = "4")]
    Bool(bool),
    #[prost(message, tag = "5")]
    Struct(Struct),
    #[prost(message, tag = "6")]
    List(ListValue),
}

/// `google.protobuf.Struct`. Its map is declared as the repeated entry
/// messages it is on the wire, so the entries keep the order we choose.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Struct {
    #[prost(message, repeated, tag = "1")]
    pub(crate) fields: Vec<FieldsEntry>,
}

/// One `Struct` map entry.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FieldsEntry {
    #[prost(string, tag = "1")]
    pub(crate) key: String,
    #[prost(message, optional, tag = "2")]
    pub(crate) value: Option<Value>,
}

/// `google.protobuf.ListValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ListValue {
    #[prost(message, repeated, tag = "1")]
    pub(crate) values: Vec<Value>,
}

impl Value {
    /// Any JSON value. Numbers become doubles, as in JavaScript.
    pub(crate) fn from_json(json: &Json) -> Value {
        let kind = match json {
            Json::Null => Kind::Null(0),
            Json::Bool(b) => Kind::Bool(*b),
            Json::Number(n) => Kind::Number(n.as_f64().unwrap_or_default()),
            Json::String(s) => Kind::String(s.clone()),
            Json::Array(items) => Kind::List(ListValue {
                values: items.iter().map(Value::from_json).collect(),
            }),
            Json::Object(map) => Kind::Struct(Struct::from_map(map)),
        };
        Value { kind: Some(kind) }
    }
}

impl Struct {
    /// An object's entries in the order JavaScript enumerates the parsed
    /// object: array-index keys first, ascending, then the rest as written.
    /// The official encoder walks `Object.entries`, so this is its byte order.
    pub(crate) fn from_map(map: &Map<String, Json>) -> Struct {
        let mut indices: Vec<(u32, &String, &Json)> = Vec::new();
        let mut named: Vec<(&String, &Json)> = Vec::new();
        for (key, value) in map {
            match array_index(key) {
                Some(index) => indices.push((index, key, value)),
                None => named.push((key, value)),
            }
        }
        indices.sort_by_key(|(index, _, _)| *index);
        let entry = |key: &String, value: &Json| FieldsEntry {
            key: key.clone(),
            value: Some(Value::from_json(value)),
        };
        let fields = indices
            .into_iter()
            .map(|(_, k, v)| entry(k, v))
            .chain(named.into_iter().map(|(k, v)| entry(k, v)))
            .collect();
        Struct { fields }
    }

    /// `Struct.wrap` of any JSON: an object's entries, an array's by index,
    /// nothing for a scalar (strings do not occur where a Struct is expected).
    pub(crate) fn from_json(json: &Json) -> Struct {
        match json {
            Json::Object(map) => Struct::from_map(map),
            Json::Array(items) => Struct {
                fields: items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| FieldsEntry {
                        key: i.to_string(),
                        value: Some(Value::from_json(v)),
                    })
                    .collect(),
            },
            _ => Struct::default(),
        }
    }
}

/// A canonical array index (`"0"`, `"17"`, not `"07"`, below 2^32 - 1):
/// the keys JavaScript enumerates before all others.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|i| *i != u32::MAX)
}

/// An event's (or nested object's) JSON fields, read the way the generated
/// codecs read them: present or absent. A `null` reads as absent except
/// through [`Fields::payload`], as the official encoder drops optional nulls
/// before encoding.
#[derive(Clone, Copy)]
pub(crate) struct Fields<'a>(pub(crate) &'a Map<String, Json>);

static EMPTY: std::sync::LazyLock<Map<String, Json>> = std::sync::LazyLock::new(Map::new);

impl<'a> Fields<'a> {
    /// The fields of `json`, or none if it is not an object.
    pub(crate) fn of(json: &'a Json) -> Fields<'a> {
        Fields(json.as_object().unwrap_or(&EMPTY))
    }

    /// A field, `null` counting as absent.
    pub(crate) fn get(self, key: &str) -> Option<&'a Json> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// An `optional string` field: written when present, even if empty.
    pub(crate) fn opt(self, key: &str) -> Option<String> {
        self.get(key).and_then(Json::as_str).map(str::to_owned)
    }

    /// A plain `string` field: prost, like the official codec, skips it when empty.
    pub(crate) fn string(self, key: &str) -> String {
        self.opt(key).unwrap_or_default()
    }

    /// An optional `google.protobuf.Value` field: a `null` is absent, as the
    /// official encoder drops optional nulls before encoding.
    pub(crate) fn value(self, key: &str) -> Option<Value> {
        self.get(key).map(Value::from_json)
    }

    /// A required `google.protobuf.Value` payload (a patch value, a custom
    /// value, a raw event, a snapshot): here `null` is data and is kept.
    pub(crate) fn payload(self, key: &str) -> Option<Value> {
        self.0.get(key).map(Value::from_json)
    }

    /// A `google.protobuf.Struct` field, present only for an object (the
    /// official encoder drops other metadata shapes rather than mangle them).
    pub(crate) fn object(self, key: &str) -> Option<Struct> {
        self.get(key)
            .and_then(Json::as_object)
            .map(Struct::from_map)
    }

    pub(crate) fn int64(self, key: &str) -> Option<i64> {
        let n = self.get(key)?;
        n.as_i64().or_else(|| n.as_f64().map(|f| f as i64))
    }

    pub(crate) fn bool(self, key: &str) -> Option<bool> {
        self.get(key).and_then(Json::as_bool)
    }

    /// An array field's items (none when absent).
    pub(crate) fn list(self, key: &str) -> &'a [Json] {
        self.get(key)
            .and_then(Json::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub(crate) fn strings(self, key: &str) -> Vec<String> {
        self.list(key)
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    pub(crate) fn nested(self, key: &str) -> Fields<'a> {
        self.get(key).map(Fields::of).unwrap_or(Fields(&EMPTY))
    }
}
