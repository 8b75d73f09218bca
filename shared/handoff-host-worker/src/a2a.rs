//! What A2A delegation needs from a Worker besides [`crate::outbound`]: unguessable tokens.

use handoff_a2a::client::TokenSource;

/// 256-bit tokens from `crypto.getRandomValues`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomTokens;

impl TokenSource for RandomTokens {
    fn token(&self) -> String {
        let mut bytes = [0u8; 32];
        // Never fails in workerd; a token must not be guessable, so fail loudly rather than weakly.
        getrandom::fill(&mut bytes).expect("crypto.getRandomValues");
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
