//! The shared size model: how many characters a piece of context is worth,
//! the way Pi estimates it (`estimateTokens` is characters ÷ 4).
//!
//! For: text (JavaScript length) and images (by pixels, from the header's
//! dimensions), so the guard's savings, its records and `/context` count the
//! same way (docs/CONTEXT.md, "The numbers"). Not for: deciding what to remove.
//!
//! An image is worth width × height ÷ 750 tokens, at most 6,700, and 1,600
//! when its header cannot be read (docs/GUARD.md, "Whole items": old images),
//! at 4 characters per token. Dimensions come from the `imagesize` crate over
//! the decoded start of the base64 data: only a prefix is decoded, since the
//! header is at the start (a JPEG's frame header can follow a large EXIF block,
//! so the prefix grows until the header is found or the data ends).
//!
//! Thinking and `!` shell commands count as the original guard counted them:
//! a thinking block is its text plus half its signature (rounded up), a
//! `bashExecution` message its command plus its output, as Pi's
//! `estimateTokens` counts it, and nothing when `excludeFromContext` (`!!`)
//! keeps it out of what the model is sent.
//! `/context`'s rows do not read this model: they are Pi's `estimateTokens`.

use crate::entry::{Block, Content, Message};
use crate::text::js_len;

/// Pixels per token (Anthropic's image token estimate, the original guard's too).
pub const PIXELS_PER_TOKEN: u64 = 750;
/// Tokens of an image whose header cannot be read.
pub const UNREADABLE_IMAGE_TOKENS: u64 = 1600;
/// The most tokens one image is counted at.
pub const MAX_IMAGE_TOKENS: u64 = 6700;
/// Characters per token (Pi's `estimateTokens`).
pub const CHARS_PER_TOKEN: u64 = 4;

/// Base64 prefixes tried in turn: most headers are in the first few hundred
/// bytes; JPEG's may follow tens of kilobytes of EXIF.
const PREFIXES: [usize; 3] = [1024, 16 * 1024, 128 * 1024];

/// Characters of a text, as JavaScript counts them.
pub fn text_chars(text: &str) -> usize {
    js_len(text)
}

/// Width and height of a base64 image (a `data:` URL prefix is allowed).
pub fn image_dimensions(base64: &str) -> Option<(usize, usize)> {
    let data = match base64.strip_prefix("data:") {
        Some(rest) => rest.split_once(',').map_or("", |(_, d)| d),
        None => base64,
    };
    for &chars in &PREFIXES {
        let prefix = data.get(..chars.min(data.len())).unwrap_or(data);
        let bytes = decode_base64_prefix(prefix);
        if let Ok(size) = imagesize::blob_size(&bytes) {
            if size.width > 0 && size.height > 0 {
                return Some((size.width, size.height));
            }
            return None;
        }
        if chars >= data.len() {
            break;
        }
    }
    None
}

/// Room for a `data:` URL's header (`data:image/png;base64,`) in the first
/// read of [`image_head`]; media types are tens of characters.
const DATA_URL_ROOM: usize = 256;

/// The start of an image's base64 data that gives the same dimensions as all
/// of it (`image_dimensions(&image_head(read)) == image_dimensions(data)`),
/// read through `read(n)`: the first `n` characters of the data, or all of it
/// when shorter. A host that keeps megabytes of base64 hands over only the
/// prefixes [`image_dimensions`] tries, a kilobyte for most images. A `data:`
/// URL whose header does not end in the first read counts as unreadable.
pub fn image_head(mut read: impl FnMut(usize) -> String) -> String {
    let mut asked = DATA_URL_ROOM + PREFIXES[0];
    let mut text = read(asked);
    let skip = match text.strip_prefix("data:") {
        Some(rest) => match rest.find(',') {
            Some(comma) => "data:".len() + comma + 1,
            None => return text,
        },
        None => 0,
    };
    for &chars in &PREFIXES {
        let want = skip.saturating_add(chars);
        // Shorter than the last read asked for: this is all of the data.
        let mut ended = text.len() < asked;
        if text.len() < want && !ended {
            asked = want;
            text = read(asked);
            ended = text.len() < asked;
        }
        let data = text.get(skip..).unwrap_or("");
        let prefix = data.get(..chars.min(data.len())).unwrap_or(data);
        if ended || imagesize::blob_size(&decode_base64_prefix(prefix)).is_ok() {
            return text;
        }
    }
    text
}

/// Tokens of an image with these dimensions (`None`: unreadable header).
pub fn image_tokens(dimensions: Option<(usize, usize)>) -> u64 {
    match dimensions {
        Some((w, h)) => {
            let pixels = (w as u64).saturating_mul(h as u64);
            pixels.div_ceil(PIXELS_PER_TOKEN).min(MAX_IMAGE_TOKENS)
        }
        None => UNREADABLE_IMAGE_TOKENS,
    }
}

/// Characters an image is worth.
pub fn image_chars(base64: &str) -> usize {
    let chars = image_tokens(image_dimensions(base64)) * CHARS_PER_TOKEN;
    usize::try_from(chars).unwrap_or(usize::MAX)
}

/// Characters of content blocks: text by length, images by pixels, tool
/// calls by their name and JSON arguments, thinking by its text and half its
/// signature.
pub fn blocks_chars(blocks: &[Block]) -> usize {
    blocks.iter().fold(0usize, |sum, b| sum.saturating_add(block_chars(b)))
}

/// Characters of one content block (see [`blocks_chars`]).
pub fn block_chars(block: &Block) -> usize {
    match block {
        Block::Text { text } => js_len(text),
        Block::Image { data, .. } => image_chars(data),
        Block::ToolCall { name, arguments, .. } => {
            js_len(name).saturating_add(serde_json::to_string(arguments).map_or(0, |a| js_len(&a)))
        }
        Block::Measured { chars, .. } => *chars,
        Block::Thinking { thinking, signature } => thinking_chars(js_len(thinking), js_len(signature)),
        Block::Other => 0,
    }
}

/// Characters of a thinking block from the JavaScript lengths of its text and
/// its signature: the signature at half, rounded up (as the original guard).
pub fn thinking_chars(thinking: usize, signature: usize) -> usize {
    thinking.saturating_add(signature.div_ceil(2))
}

/// Characters of a `bashExecution` message from the JavaScript lengths of its
/// command and output; 0 when `excludeFromContext` keeps it from the model.
pub fn bash_chars(command: usize, output: usize, excluded: bool) -> usize {
    if excluded {
        0
    } else {
        command.saturating_add(output)
    }
}

/// Characters of user or custom content: a string by length, blocks as above.
pub fn content_chars(content: &Content) -> usize {
    match content {
        Content::Text(t) => js_len(t),
        Content::Blocks(b) => blocks_chars(b),
    }
}

/// Characters of a model-visible message (summaries by their text; roles the
/// core does not read count 0).
pub fn message_chars(m: &Message) -> usize {
    match m {
        Message::User { content } | Message::Custom { content, .. } => content_chars(content),
        Message::Assistant { content, .. } | Message::ToolResult { content, .. } => blocks_chars(content),
        Message::CompactionSummary { summary } | Message::BranchSummary { summary } => js_len(summary),
        Message::BashExecution { command, output, exclude_from_context } => {
            bash_chars(js_len(command), js_len(output), *exclude_from_context)
        }
        Message::Other => 0,
    }
}

/// Decodes standard or URL-safe base64 until the first character that is not
/// part of it (padding, or the end of the prefix); whitespace is skipped.
/// A trailing partial group is dropped.
pub fn decode_base64_prefix(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 3);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(bytes: &[u8]) -> String {
        const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in bytes.chunks(3) {
            let n = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            for i in 0..4 {
                if i <= c.len() {
                    s.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    s.push('=');
                }
            }
        }
        s
    }

    /// A PNG header (signature and IHDR) of the given size.
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut v = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, b'I', b'H', b'D', b'R'];
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        v
    }

    /// A JPEG whose frame header follows a large APP1 (EXIF-like) block.
    fn jpeg(w: u16, h: u16, exif: usize) -> Vec<u8> {
        let mut v = vec![0xFF, 0xD8];
        let mut left = exif;
        while left > 0 {
            let len = left.min(60_000);
            v.extend_from_slice(&[0xFF, 0xE1]);
            v.extend_from_slice(&((len + 2) as u16).to_be_bytes());
            v.extend(std::iter::repeat_n(0u8, len));
            left -= len;
        }
        v.extend_from_slice(&[0xFF, 0xC0, 0, 17, 8]);
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
        v.extend_from_slice(&[0xFF, 0xD9]);
        v
    }

    #[test]
    fn decodes_base64_prefixes() {
        assert_eq!(decode_base64_prefix(&b64(b"hello world")), b"hello world");
        assert_eq!(decode_base64_prefix("aGVsbG8"), b"hello");
        assert_eq!(decode_base64_prefix("aGVs\nbG8="), b"hello");
        assert_eq!(decode_base64_prefix("!!"), b"");
    }

    #[test]
    fn images_count_by_pixels() {
        assert_eq!(image_dimensions(&b64(&png(1280, 960))), Some((1280, 960)));
        assert_eq!(image_tokens(Some((1280, 960))), 1639);
        assert_eq!(image_chars(&b64(&png(1280, 960))), 1639 * 4);
        assert_eq!(image_chars(&format!("data:image/png;base64,{}", b64(&png(10, 10)))), 4);
        // Capped, and unreadable.
        assert_eq!(image_tokens(Some((10_000, 10_000))), MAX_IMAGE_TOKENS);
        assert_eq!(image_chars("not an image"), 1600 * 4);
        assert_eq!(image_chars(""), 1600 * 4);
        assert_eq!(image_tokens(Some((usize::MAX, usize::MAX))), MAX_IMAGE_TOKENS);
    }

    #[test]
    fn a_jpeg_header_after_exif_is_found() {
        assert_eq!(image_dimensions(&b64(&jpeg(1200, 800, 100))), Some((1200, 800)));
        assert_eq!(image_dimensions(&b64(&jpeg(1200, 800, 40_000))), Some((1200, 800)));
    }

    #[test]
    fn an_image_head_reads_only_what_the_dimensions_need() {
        let cases = [
            b64(&png(1280, 960)) + &"A".repeat(300_000),
            format!("data:image/png;base64,{}", b64(&png(10, 10))),
            b64(&jpeg(1200, 800, 40_000)),
            b64(&jpeg(1200, 800, 200_000)),
            "data:image/png;base64".to_string(),
            "x".repeat(200_000),
            String::new(),
            "日本😀".repeat(1000),
        ];
        for data in cases {
            let mut asked = Vec::new();
            let head = image_head(|n| {
                asked.push(n);
                crate::text::js_prefix(&data, n).to_string()
            });
            assert_eq!(image_dimensions(&head), image_dimensions(&data), "{:?}", &data[..data.len().min(40)]);
            assert!(asked.len() <= 3 && data.starts_with(&head), "{asked:?}");
        }
        let png_data = b64(&png(1280, 960)) + &"A".repeat(300_000);
        assert!(image_head(|n| png_data[..n.min(png_data.len())].to_string()).len() <= DATA_URL_ROOM + 1024);
    }

    #[test]
    fn blocks_add_up() {
        let blocks = vec![
            Block::Text { text: "日本😀".into() },
            Block::Image { data: b64(&png(75, 10)), mime_type: "image/png".into() },
            Block::Other,
        ];
        assert_eq!(blocks_chars(&blocks), 4 + 4);
    }

    #[test]
    fn thinking_counts_its_text_and_half_its_signature() {
        // 1,200 characters of thinking and a 501-character signature: 1,200 + 251.
        let thinking = Block::Thinking { thinking: "t".repeat(1200), signature: "s".repeat(501) };
        assert_eq!(block_chars(&thinking), 1451);
        // JavaScript lengths: "日本😀" is 4 units, so 4 + 2 of a 4-unit signature.
        assert_eq!(block_chars(&Block::Thinking { thinking: "日本😀".into(), signature: "日本😀".into() }), 6);
        // A redacted block (no text, the signature only) and an empty one.
        assert_eq!(block_chars(&Block::Thinking { thinking: String::new(), signature: "x".repeat(3) }), 2);
        assert_eq!(block_chars(&Block::Thinking { thinking: String::new(), signature: String::new() }), 0);
        // Beside text and a tool call in one assistant message, read from Pi's JSON.
        let m = Message::from_value(serde_json::json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "x".repeat(100), "thinkingSignature": "y".repeat(40)},
            {"type": "text", "text": "done"},
            {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "ls"}}
        ]}));
        // 100 + 20, 4, "bash" 4 + `{"command":"ls"}` 16.
        assert_eq!(message_chars(&m), 144);
    }

    #[test]
    fn a_shell_command_counts_its_command_and_output() {
        let m = |excluded: bool| {
            Message::from_value(serde_json::json!({"role": "bashExecution", "command": "cargo test",
                "output": "o".repeat(5000), "exitCode": 0, "excludeFromContext": excluded}))
        };
        assert_eq!(message_chars(&m(false)), 10 + 5000);
        // `!!`: Pi does not send it, so it takes no room.
        assert_eq!(message_chars(&m(true)), 0);
        assert_eq!(bash_chars(usize::MAX, 1, false), usize::MAX);
    }
}
