//! Golden bytes from the official encoder (see `golden.rs`), and round trips
//! through prost.

use prost::Message as _;

use super::golden::GOLDEN;
use super::value::{Kind, Struct};
use super::{Arm, Envelope, MEDIA_TYPE, encode, encode_frame, envelope, type_number};
use crate::event::{Event, EventType};

fn event(json: &str) -> Event {
    serde_json::from_str(json).expect("test event parses")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn matches_the_official_encoder_byte_for_byte() {
    let mismatched: Vec<&str> = GOLDEN
        .iter()
        .filter(|(_, json, golden)| hex(&encode(&event(json))) != *golden)
        .map(|(name, _, _)| *name)
        .collect();
    assert!(
        mismatched.is_empty(),
        "differ from the official encoding: {mismatched:?}"
    );
}

#[test]
fn goldens_cover_every_event_type() {
    for t in EventType::ALL {
        assert!(
            GOLDEN
                .iter()
                .any(|(_, json, _)| event(json).event_type() == t),
            "no golden for {t}"
        );
    }
}

#[test]
fn decodes_back_to_the_same_message() {
    for (name, json, _) in GOLDEN {
        let message = envelope(&event(json));
        let bytes = encode(&event(json));
        let decoded = Envelope::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(decoded, message, "{name}");
    }
}

#[test]
fn frames_carry_a_big_endian_length() {
    let e = event(GOLDEN[1].1);
    let body = encode(&e);
    let frame = encode_frame(&e);
    assert_eq!(frame[..4], (body.len() as u32).to_be_bytes());
    assert_eq!(frame[4..], body[..]);
    assert_eq!(MEDIA_TYPE, "application/vnd.ag-ui.event+proto");
}

#[test]
fn zero_null_and_false_payloads_stay_present() {
    let Some(Arm::Custom(custom)) =
        envelope(&event(r#"{"type":"CUSTOM","name":"n","value":false}"#)).event
    else {
        panic!("CUSTOM arm");
    };
    assert_eq!(custom.value.and_then(|v| v.kind), Some(Kind::Bool(false)));
}

#[test]
fn objects_enumerate_index_keys_first_like_javascript() {
    let map = serde_json::json!({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5});
    let keys: Vec<String> = Struct::from_json(&map)
        .fields
        .into_iter()
        .map(|f| f.key)
        .collect();
    // serde_json's map order for the rest, with "2" < "10" numerically first.
    let rest: Vec<&str> = map
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| !["2", "10"].contains(k))
        .collect();
    assert_eq!(keys[..2], ["2", "10"]);
    assert_eq!(keys[2..], rest[..]);
}

#[test]
fn every_event_type_has_its_own_number() {
    let mut numbers: Vec<i32> = EventType::ALL.iter().map(|t| type_number(*t)).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (0..31).collect::<Vec<_>>());
}

#[test]
fn an_optional_null_is_absent_and_a_required_one_is_kept() {
    let mut finished = crate::event::RunFinished::new("t1", "r1");
    finished.result = Some(serde_json::Value::Null);
    let bare = GOLDEN
        .iter()
        .find(|(name, _, _)| *name == "run_finished_bare");
    assert_eq!(
        Some(hex(&encode(&finished.into()))),
        bare.map(|g| g.2.to_owned())
    );
    let Some(Arm::Custom(custom)) =
        envelope(&event(r#"{"type":"CUSTOM","name":"n","value":null}"#)).event
    else {
        panic!("CUSTOM arm");
    };
    assert_eq!(custom.value.and_then(|v| v.kind), Some(Kind::Null(0)));
}
