//! Old images (docs/GUARD.md, "Whole items"): tool-result images that enough
//! assistant messages have followed leave the context, with no classifier
//! request.
//!
//! For: which results lose their images, the stub that stands for them
//! (dimensions from the image header, tokens by pixels, see `size`), and the
//! text-only replacement (the stub, then the result's own text blocks). Not
//! for: images in user messages (never touched: they are usually the spec),
//! or results another extension changed.
//!
//! The classifier reads text only, and a model reacts to an image in its next
//! message, whose text stays: so age alone decides, and this works when the
//! classifier is unavailable. Images from before the run's prompt also wait
//! for the run-end break-even (`exchange::run_end_break_even`, in the pass).

use serde::Serialize;
use serde_json::Value;

use crate::entry::{Block, ContextEntry, Message};
use crate::read::Fields;
use crate::render::{recall_call, MARK};
use crate::size::{blocks_chars, image_dimensions, image_tokens};
use crate::text::short_count;

/// One result whose images go.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageEdit {
    pub entry_id: String,
    /// Its index in the entries the pass read.
    #[serde(skip)]
    pub entry_index: usize,
    pub tool: String,
    /// Assistant messages after the result.
    pub turns: usize,
    pub images: usize,
    /// The replacement: the stub, then the result's own text blocks.
    pub texts: Vec<String>,
    /// Sizes before and after (images by pixels).
    pub before_chars: usize,
    pub after_chars: usize,
    /// The cache rewrite its edit causes and where it starts (set by the
    /// pass from `cache::Rewrite`).
    pub rewrite_chars: usize,
    pub rewrite_basis: crate::cache::Basis,
    /// The result is before the run's prompt (set by the pass): its removal
    /// goes through the run-end break-even (`exchangeBreakEven`); images
    /// inside the run go once old enough.
    pub before_run: bool,
}

impl ImageEdit {
    pub fn from_value(v: Value) -> ImageEdit {
        let mut f = Fields::of(v);
        ImageEdit {
            entry_id: f.string("entryId"),
            entry_index: f.count("entryIndex"),
            tool: f.string("tool"),
            turns: f.count("turns"),
            images: f.count("images"),
            texts: f.list("texts", |t| t.as_str().map(str::to_string).unwrap_or_default()),
            before_chars: f.count("beforeChars"),
            after_chars: f.count("afterChars"),
            rewrite_chars: f.count("rewriteChars"),
            rewrite_basis: crate::cache::Basis::parse(&f.string("rewriteBasis")).unwrap_or_default(),
            before_run: f.boolean("beforeRun"),
        }
    }
}

/// The stub: `[context-guard] Removed 1 image from this output (1280×960; ~1.6k tokens), 4 turns old. recall({"entryId":"…"}) shows it again.`
pub fn stub(entry_id: &str, dimensions: &[Option<(usize, usize)>], turns: usize) -> String {
    let n = dimensions.len();
    let sizes: Vec<String> = dimensions
        .iter()
        .map(|d| match d {
            Some((w, h)) => format!("{w}×{h}"),
            None => "size unknown".to_string(),
        })
        .collect();
    let tokens = dimensions.iter().fold(0u64, |a, d| a.saturating_add(image_tokens(*d)));
    let tokens = usize::try_from(tokens).unwrap_or(usize::MAX);
    format!(
        "{MARK} Removed {n} image{} from this output ({}; ~{} tokens), {turns} turn{} old. {} shows {} again.",
        if n == 1 { "" } else { "s" },
        crate::text::join(&sizes, ", "),
        short_count(tokens),
        if turns == 1 { "" } else { "s" },
        recall_call(entry_id),
        if n == 1 { "it" } else { "them" },
    )
}

/// Every tool result with images that at least `keep_turns` assistant
/// messages follow, unedited (an edit by anyone means its images are gone or
/// someone else owns it). `keep_turns` 0 turns this off.
pub fn old_images(entries: &[ContextEntry], keep_turns: usize) -> Vec<ImageEdit> {
    if keep_turns == 0 {
        return Vec::new();
    }
    // Assistant messages after each entry, counted from the end.
    let mut after = vec![0usize; entries.len()];
    let mut seen = 0usize;
    for (i, e) in entries.iter().enumerate().rev() {
        if let Some(slot) = after.get_mut(i) {
            *slot = seen;
        }
        seen += e.replies();
    }
    let mut out = Vec::new();
    for (i, (e, &turns)) in entries.iter().zip(&after).enumerate() {
        if turns < keep_turns || e.raw.is_some() {
            continue;
        }
        let [Message::ToolResult { tool_name, content, .. }] = e.messages.as_slice() else { continue };
        let dimensions: Vec<Option<(usize, usize)>> = content
            .iter()
            .filter_map(|b| match b {
                Block::Image { data, .. } => Some(image_dimensions(data)),
                _ => None,
            })
            .collect();
        if dimensions.is_empty() {
            continue;
        }
        let mut texts = vec![stub(&e.id, &dimensions, turns)];
        texts.extend(content.iter().filter_map(|b| match b {
            Block::Text { text } => Some(text.clone()),
            _ => None,
        }));
        let after_blocks: Vec<Block> = texts.iter().map(|t| Block::Text { text: t.clone() }).collect();
        out.push(ImageEdit {
            entry_id: e.id.clone(),
            entry_index: i,
            tool: tool_name.clone(),
            turns,
            images: dimensions.len(),
            before_chars: blocks_chars(content),
            after_chars: blocks_chars(&after_blocks),
            texts,
            rewrite_chars: 0,
            rewrite_basis: crate::cache::Basis::default(),
            before_run: false,
        });
    }
    out
}

/// The first entry that `keep_turns` assistant messages do not yet follow:
/// the entries before it are as old as [`old_images`] needs.
pub fn young_from(entries: &[ContextEntry], keep_turns: usize) -> usize {
    let mut after = 0usize;
    for (i, e) in entries.iter().enumerate().rev() {
        if after >= keep_turns {
            return i + 1;
        }
        after += e.replies();
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Content;
    use crate::testing::{entry, png_b64, say, shot, user};

    #[test]
    fn images_old_enough_go_with_a_stub_and_their_text_stays() {
        let entries = vec![
            entry("u", user("look")),
            shot("r1", "Read image 日本😀", &png_b64(1280, 960)),
            entry("a1", say("one")),
            entry("a2", say("two")),
            shot("r2", "young", &png_b64(10, 10)),
            entry("a3", say("three")),
        ];
        let edits = old_images(&entries, 3);
        assert_eq!(edits.len(), 1);
        let e = &edits[0];
        assert_eq!((e.entry_id.as_str(), e.turns, e.images), ("r1", 3, 1));
        assert_eq!(
            e.texts[0],
            "[context-guard] Removed 1 image from this output (1280×960; ~1.6k tokens), 3 turns old. \
             recall({\"entryId\":\"r1\"}) shows it again."
        );
        assert_eq!(e.texts[1], "Read image 日本😀");
        let text = crate::text::js_len("Read image 日本😀");
        assert_eq!(e.before_chars, text + 1639 * 4);
        assert_eq!(e.after_chars, crate::text::js_len(&e.texts[0]) + text);
        assert!(old_images(&entries, 0).is_empty());
        assert_eq!(old_images(&entries, 1).len(), 2);
    }

    #[test]
    fn user_images_edited_results_and_unreadable_headers() {
        let mut edited = shot("r2", "x", &png_b64(5, 5));
        edited.raw = Some(edited.messages[0].clone());
        let entries = vec![
            entry(
                "u",
                Message::User {
                    content: Content::Blocks(vec![Block::Image { data: png_b64(9, 9), mime_type: "image/png".into() }]),
                },
            ),
            shot("r1", "", "garbage"),
            edited,
            entry("a1", say("1")),
        ];
        let edits = old_images(&entries, 1);
        assert_eq!(edits.len(), 1, "only the unedited tool result");
        assert!(edits[0].texts[0].contains("(size unknown; ~1.6k tokens), 1 turn old"));
    }
}
