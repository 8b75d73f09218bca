use super::Quota;

#[test]
fn windows_parse_with_and_without_a_number() {
    let parsed = |v: &str| v.parse::<Quota>().map(|q| (q.count, q.window_ms));
    assert_eq!(parsed("60/min"), Ok((60, 60_000)));
    assert_eq!(parsed("3/10s"), Ok((3, 10_000)));
    assert_eq!(parsed("200000/day"), Ok((200_000, 86_400_000)));
    assert_eq!(parsed(" 5 / 2h "), Ok((5, 7_200_000)));
}

#[test]
fn malformed_values_are_refused() {
    for bad in [
        "", "60", "60/", "/min", "x/min", "60/week", "0/min", "5/0s", "-1/s", "5/1.5h", "5/min10",
    ] {
        assert!(bad.parse::<Quota>().is_err(), "{bad:?} parsed");
    }
}
