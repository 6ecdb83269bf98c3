//! Which of a pass's output edits pay off now (docs/GUARD.md "When an edit
//! pays off", issue 26): large and small outputs go through the money rule
//! (`worth::weigh`) like checkpoints, exchanges and images.
//!
//! An edit rewrites the cache from the first edited output on, so the choice
//! is where to start: the outputs from some point to the end of the context
//! go together, those before it wait. Every such set is weighed and the one
//! that gains most (gain − cost) among those that pay off is taken; without
//! one, all wait. An output that waits is never lost: a later run end weighs
//! it again (`memo::deferred_outputs`), and a lapsed cache takes it in free.
//!
//! For: [`Candidate`], [`best`] (before the judge, on the share the session's
//! judge is expected to remove, its cost included; after it, on what it
//! removed) and [`later_by_index`] (the requests expected after a run end,
//! per output). Not for: measuring the rewrite (`cache`) or the record.

use crate::cache::{BreakEven, Outlook, Rule};
use crate::entry::ContextEntry;

/// One output's edit as the gate weighs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Candidate {
    /// Context characters from its entry to the end: the rewrite its edit starts.
    pub rewrite: usize,
    /// Characters it keeps out (before the judge: its size, weighed at the expected share).
    pub saved: usize,
    /// Requests expected to carry it after this pass.
    pub later: usize,
    /// The judge's cost of asking about it, in millionths of a dollar (0 after the judge).
    pub judge_micros: usize,
}

/// The best set to edit: the candidates whose rewrite is at most `rewrite`
/// (from one point to the end), and the decision for the record. With none
/// that pays, `rewrite` is `None` and the decision is the whole set's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Choice {
    pub rewrite: Option<usize>,
    pub decision: BreakEven,
}

impl Choice {
    /// Whether an edit whose rewrite starts at `rewrite` (a candidate's) is in the chosen set.
    pub fn takes(&self, rewrite: usize) -> bool {
        self.rewrite.is_some_and(|r| rewrite <= r)
    }
}

/// Weighs every set from one candidate to the end (`other_rewrite`: what the
/// pass's other edits rewrite anyway, which the outputs after it ride along
/// with). `outlook.share_permille` is the share of `saved` expected to go.
pub fn best(candidates: &[Candidate], other_rewrite: usize, outlook: &Outlook) -> Choice {
    let mut starts: Vec<usize> = candidates.iter().map(|c| c.rewrite).collect();
    crate::order::sort_by(&mut starts, |a, b| b.cmp(a));
    starts.dedup();
    let mut chosen = Choice::default();
    let mut best_net = 0i128;
    for (k, &start) in starts.iter().enumerate() {
        let set = candidates.iter().filter(|c| c.rewrite <= start);
        let (saved, weighted, judge) = set.fold((0usize, 0u128, 0usize), |(s, w, j), c| {
            (s.saturating_add(c.saved), w + c.saved as u128 * c.later as u128, j.saturating_add(c.judge_micros))
        });
        // The later requests, weighted by what each output keeps out.
        let later = if saved == 0 { 1 } else { usize::try_from(weighted / saved as u128).unwrap_or(usize::MAX).max(1) };
        let decision = BreakEven {
            rule: Rule::Outputs,
            saved_chars: saved,
            rewrite_chars: start.saturating_sub(other_rewrite),
            ..BreakEven::default()
        }
        .weigh(&Outlook { later, ..*outlook }, judge);
        let net = decision.gain_micros as i128 - decision.cost_micros as i128;
        if k == 0 {
            chosen.decision = decision;
        }
        if decision.paid_off && (chosen.rewrite.is_none() || net > best_net) {
            (chosen.rewrite, chosen.decision, best_net) = (Some(start), decision, net);
        }
    }
    chosen
}

/// For each entry index, the requests expected after a run end to carry an
/// output there: as many as the session has had since the end of the output's
/// run (the runs are `exchange::prompts`), at least one. An output of the run
/// that just ended gets one: the next prompt's first request, if it comes,
/// is the only later request the session has shown. Each run end that finds
/// it waiting weighs it with the longer horizon the session has shown since.
pub fn later_by_index(entries: &[ContextEntry]) -> Vec<usize> {
    let prompts = crate::exchange::prompts(entries);
    // Requests (assistant messages) at or after each entry index.
    let mut after = vec![0usize; entries.len() + 1];
    for (i, e) in entries.iter().enumerate().rev() {
        let own = e.replies();
        after[i] = after[i + 1] + own;
    }
    (0..entries.len())
        .map(|i| {
            let next_prompt = prompts.iter().find(|&&p| p > i).copied();
            next_prompt.map_or(0, |p| after.get(p).copied().unwrap_or(0)).max(1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::testing::{call, entry, result, say, user};
    use crate::worth::Prices;
    use serde_json::json;

    /// Claude Sonnet 4.5: $3 input, $0.30 cache read, $3.75 cache write per million.
    fn outlook() -> Outlook {
        Outlook {
            cache: Cache::Anthropic,
            prices: Prices { input: 3_000_000, cache_read: 300_000, cache_write: 3_750_000 },
            share_permille: 1000,
            ..Outlook::default()
        }
    }

    #[test]
    fn the_last_output_alone_pays_when_the_whole_batch_does_not() {
        // Five reads of 14,000 characters, each followed by 200 characters, the judge removing 30%
        // of each: from the first, 71,000 rewritten less 21,000 gone = 50,000 characters (12,500
        // tokens × $3.45/M = $0.0431) against 21,000 (5,250 tokens × $0.30/M × 1 = $0.0016).
        let c = |k: usize, saved: usize| Candidate { rewrite: (5 - k) * 14_200, saved, later: 1, judge_micros: 0 };
        let mild: Vec<Candidate> = (0..5).map(|k| c(k, 4_200)).collect();
        let choice = best(&mild, 0, &outlook());
        assert_eq!(choice.rewrite, None, "nothing pays: all wait");
        assert_eq!((choice.decision.rule, choice.decision.saved_chars), (Rule::Outputs, 21_000));
        assert!(!choice.decision.paid_off);
        // The last read judged 95% gone: alone it rewrites 14,200 − 13,300 = 900 characters (776 µ$)
        // and saves 13,300 (997 µ$); with the four before it the rewrite would not pay.
        let mut last = mild.clone();
        last[4].saved = 13_300;
        let choice = best(&last, 0, &outlook());
        assert_eq!(choice.rewrite, Some(14_200));
        assert!(choice.takes(last[4].rewrite) && !choice.takes(last[3].rewrite));
        assert_eq!((choice.decision.gain_micros, choice.decision.cost_micros), (997, 776));
        // Every read judged 95% gone: all five together gain the most.
        let strong: Vec<Candidate> = (0..5).map(|k| c(k, 13_300)).collect();
        let choice = best(&strong, 0, &outlook());
        assert_eq!(choice.rewrite, Some(71_000));
        assert!(strong.iter().all(|c| choice.takes(c.rewrite)));
    }

    #[test]
    fn a_lapsed_cache_or_other_edits_leave_no_rewrite_to_pay_for() {
        let mild = [Candidate { rewrite: 70_000, saved: 4_200, later: 1, judge_micros: 0 }];
        assert!(!best(&mild, 0, &outlook()).decision.paid_off);
        let lapsed = Outlook { lapsed: Some(600_000), ..outlook() };
        assert_eq!(best(&mild, 0, &lapsed).rewrite, Some(70_000));
        // An old image earlier in the context is removed anyway: the output rides along.
        assert_eq!(best(&mild, 80_000, &outlook()).rewrite, Some(70_000));
    }

    #[test]
    fn before_the_judge_the_expected_share_and_its_cost_count() {
        // 40,000 characters at the end, expected 90% gone: 36,000 kept out (2,700 µ$ a request),
        // 4,000 + 500 written again (3,881 µ$). One later request does not pay, two do.
        let one = Candidate { rewrite: 40_500, saved: 40_000, later: 1, judge_micros: 0 };
        let share = Outlook { share_permille: 900, ..outlook() };
        assert!(!best(&[one], 0, &share).decision.paid_off);
        let two = Candidate { later: 2, ..one };
        assert!(best(&[two], 0, &share).decision.paid_off);
        // The judge's cost is added to the rewrite's: a judge at $1/M input for 40,000 characters.
        assert!(!best(&[Candidate { judge_micros: 10_000, ..two }], 0, &share).decision.paid_off);
    }

    #[test]
    fn later_requests_are_those_since_the_outputs_run_ended() {
        let entries = vec![
            entry("u1", user("read the handlers")),
            entry("a1", call("c1", "read", json!({"path": "a.ts"}))),
            entry("r1", result("c1", "read", "x")),
            entry("s1", say("read")),
            entry("u2", user("and b?")),
            entry("a2", call("c2", "read", json!({"path": "b.ts"}))),
            entry("r2", result("c2", "read", "y")),
            entry("s2", say("b")),
        ];
        // r1's run ended; the session has had 2 requests since. r2's run just ended: 1.
        assert_eq!(later_by_index(&entries), vec![2, 2, 2, 2, 1, 1, 1, 1]);
        assert!(later_by_index(&[]).is_empty());
    }
}
