//! `scan`: one `Query` reads every live item under a prefix (history pages), chunked
//! values assembled, expired and other-prefix items left out, in key order.

mod support;

use handoff_core::{Condition, Store, Write};
use handoff_store_dynamodb::DynamoOptions;
use support::fresh_store_with;

const NOW: u64 = 1_795_000_000_000;

#[tokio::test]
async fn scan_reads_a_prefix_with_one_query_and_assembles_chunked_values() {
    // A small inline limit so one page is stored in chunks.
    let store = fresh_store_with(DynamoOptions::default().with_inline_max_bytes(1024)).await;
    // Incompressible bytes (a linear congruential sequence), so the value must be chunked.
    let big: Vec<u8> = (0..40_000u32)
        .scan(7u32, |x, _| {
            *x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            Some(*x)
        })
        .flat_map(u32::to_le_bytes)
        .collect();
    let writes = vec![
        Write::put("msgs#00000001", Condition::Absent, b"second".to_vec(), None),
        Write::put("msgs#00000000", Condition::Absent, b"first".to_vec(), None),
        Write::put("msgs#00000002", Condition::Absent, big.clone(), None),
        Write::put(
            "msgs#00000003",
            Condition::Absent,
            b"gone".to_vec(),
            Some(NOW + 10),
        ),
        Write::put("thread", Condition::Absent, b"head".to_vec(), None),
    ];
    store.commit("t", writes, NOW).await.unwrap();

    let before = store.call_counter().snapshot();
    let items = store.scan("t", "msgs#", NOW + 20).await.unwrap();
    let calls = store.call_counter().since(&before);
    assert_eq!(calls.get("Query"), Some(&1), "{calls:?}");
    assert_eq!(calls.get("GetItem"), None, "{calls:?}");
    assert!(
        calls.contains_key("BatchGetItem"),
        "no chunks were read: {calls:?}"
    );
    let keys: Vec<&str> = items.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["msgs#00000000", "msgs#00000001", "msgs#00000002"]);
    assert_eq!(items[0].value, b"first");
    assert_eq!(items[2].value, big, "the chunked value came back whole");
    assert!(items.iter().all(|i| i.version == 1));
}
