//! Our verifier's side of the conformance corpus (the official client's side is
//! `tests/node/conformance.test.mjs`).

use agui_protocol::verify::{Mode, VerifyOptions, verify_sse};
use handoff_tests::corpus::{negatives, our_verdict, positives};

#[test]
fn positive_streams_pass_the_strict_verifier() {
    for case in positives() {
        if let Err(violation) = our_verdict(&case) {
            panic!("{}: {violation}", case.name);
        }
    }
}

#[test]
fn negative_streams_fail_both_modes() {
    for case in negatives() {
        assert!(
            our_verdict(&case).is_err(),
            "{}: official mode accepted it",
            case.name
        );
        let strict = VerifyOptions::new(Mode::Strict).with_ids(case.thread_id, case.run_id);
        assert!(
            verify_sse(&case.bytes, strict).is_err(),
            "{}: strict mode accepted it",
            case.name
        );
    }
}

#[test]
fn case_names_are_unique() {
    let mut names: Vec<_> = positives()
        .into_iter()
        .chain(negatives())
        .map(|c| c.name)
        .collect();
    let before = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), before);
}
