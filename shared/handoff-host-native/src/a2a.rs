//! Native randomness for A2A: secure per-subscription tokens. Outbound calls go
//! through the one client, [`crate::outbound::UreqOutbound`].

use handoff_a2a::client::TokenSource;

/// Tokens from the OS random generator (two UUID v4s: 244 random bits).
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomTokens;

impl TokenSource for RandomTokens {
    fn token(&self) -> String {
        format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_and_fresh() {
        let (a, b) = (RandomTokens.token(), RandomTokens.token());
        assert!(a.len() >= 32);
        assert_ne!(a, b);
    }
}
