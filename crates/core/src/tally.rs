//! A first look at the projected messages: how many of each role and how many
//! tokens each role holds. The `/context` report grows out of this.

use serde::{Deserialize, Serialize};

/// One projected message, reduced to what the core needs. `tokens` is Pi's own
/// `estimateTokens` for the message, read by the extension.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageDigest {
    pub role: String,
    #[serde(default)]
    pub tokens: f64,
}

/// Messages and tokens of one role.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleTally {
    pub role: String,
    pub messages: u32,
    pub tokens: u64,
}

/// Roles in order of first appearance, with their totals.
pub fn by_role(messages: &[MessageDigest]) -> Vec<RoleTally> {
    let mut out: Vec<RoleTally> = Vec::new();
    for m in messages {
        let tokens = whole_tokens(m.tokens);
        match out.iter_mut().find(|t| t.role == m.role) {
            Some(t) => {
                t.messages += 1;
                t.tokens += tokens;
            }
            None => out.push(RoleTally { role: m.role.clone(), messages: 1, tokens }),
        }
    }
    out
}

/// A token count from the host, made safe: NaN, negatives and infinities are 0.
pub fn whole_tokens(t: f64) -> u64 {
    if t.is_finite() && t > 0.0 {
        t.round() as u64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(role: &str, tokens: f64) -> MessageDigest {
        MessageDigest { role: role.into(), tokens }
    }

    #[test]
    fn tallies_by_role_in_order_of_appearance() {
        let got = by_role(&[digest("user", 10.0), digest("assistant", 5.0), digest("user", 2.0)]);
        assert_eq!(
            got,
            vec![
                RoleTally { role: "user".into(), messages: 2, tokens: 12 },
                RoleTally { role: "assistant".into(), messages: 1, tokens: 5 },
            ]
        );
    }

    #[test]
    fn bad_token_counts_count_as_zero() {
        let got = by_role(&[digest("user", f64::NAN), digest("user", -3.0), digest("user", f64::INFINITY)]);
        assert_eq!(got[0].tokens, 0);
        assert_eq!(got[0].messages, 3);
    }
}
