//! The name a model sees for an MCP tool: `{server}__{tool}`.
//!
//! Providers accept tool names of `[A-Za-z0-9_-]{1,64}` (OpenAI's rule, the strictest),
//! while MCP tool names may hold dots, slashes or any Unicode. Other characters become
//! `_`; a name over 64 characters keeps its first 55 and ends with `_` and 8 hex digits
//! of a hash of the whole unsanitized name, so two long names that share a prefix stay
//! apart and the same tool gets the same name on every instance and every run.

/// Longest tool name providers accept.
pub const MAX_NAME: usize = 64;
/// `{server}` and `{tool}` are joined with this.
pub const SEPARATOR: &str = "__";

/// The offered name of `tool` on `server`.
pub fn offered_name(server: &str, tool: &str) -> String {
    let full = format!("{server}{SEPARATOR}{tool}");
    let clean: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.len() <= MAX_NAME {
        return clean;
    }
    // All ASCII by now: byte indices are character indices.
    let suffix = format!("_{:08x}", fnv1a(full.as_bytes()) as u32);
    format!("{}{suffix}", &clean[..MAX_NAME - suffix.len()])
}

/// 64-bit FNV-1a: stable across builds and hosts (std's hasher is neither promised).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_joined_and_cleaned() {
        assert_eq!(offered_name("everything", "echo"), "everything__echo");
        assert_eq!(
            offered_name("every thing", "get-sum"),
            "every_thing__get-sum"
        );
        assert_eq!(offered_name("docs", "files/read.v2"), "docs__files_read_v2");
        assert_eq!(offered_name("d", "héllo"), "d__h_llo");
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash_suffix() {
        let long = "a".repeat(80);
        let name = offered_name("server", &long);
        assert_eq!(name.len(), MAX_NAME);
        assert!(name.starts_with("server__aaaa"), "{name}");
        assert_eq!(name, offered_name("server", &long), "stable");
        let other = offered_name("server", &format!("{long}b"));
        assert_eq!(other.len(), MAX_NAME);
        assert_ne!(name, other, "a shared prefix does not collide");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
        // Exactly 64 is not cut.
        let edge = "b".repeat(MAX_NAME - "s__".len());
        assert_eq!(offered_name("s", &edge), format!("s__{edge}"));
    }
}
