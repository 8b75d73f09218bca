use super::*;

#[test]
fn nothing_is_set_up_without_an_endpoint() {
    let none = Telemetry::from_lookup(|_| None).expect("no error");
    assert!(none.is_none());
    let blank = Telemetry::from_lookup(|key| {
        (key == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| " ".to_owned())
    });
    assert!(blank.expect("no error").is_none());
}

#[test]
fn an_unsupported_protocol_is_refused_by_name() {
    let error = Telemetry::from_lookup(|key| match key {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://127.0.0.1:4318".to_owned()),
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("grpc".to_owned()),
        _ => None,
    })
    .unwrap_err();
    assert!(
        error.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"),
        "{error}"
    );
}

#[test]
fn a_sampled_xray_header_is_a_parent() {
    let header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    let parent = xray_parent(header).expect("a parent");
    assert_eq!(
        parent.trace_id().to_string(),
        "5759e988bd862e3fe1be46a994272793"
    );
    assert_eq!(parent.span_id().to_string(), "53995c3f42cd8ad8");
    assert!(parent.is_sampled() && parent.is_remote());
}

#[test]
fn an_unsampled_or_broken_xray_header_is_not() {
    let unsampled = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0";
    assert!(xray_parent(unsampled).is_none());
    let no_parent = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1";
    assert!(xray_parent(no_parent).is_none());
    let bad_root = "Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    assert!(xray_parent(bad_root).is_none());
    assert!(xray_parent("").is_none());
}
