//! The guard's size model where the break-even and the exchange sizes read it
//! (issue 9 part 4): thinking blocks count their text and half their
//! signature, `bashExecution` messages their command and output (nothing for
//! `!!`), through `size::message_chars`, which `cache::rewrite` and
//! `exchange::spans` share.

use context_guard_base::entry::ContextEntry;
use context_guard_economics::cache::{rewrite, MainModel};
use context_guard_guard::exchange::spans;
use serde_json::{json, Value};

fn entry(id: &str, message: Value) -> ContextEntry {
    ContextEntry::from_value(json!({ "id": id, "entryType": "message", "messages": [message] }))
}

fn session() -> Vec<ContextEntry> {
    vec![
        entry("u", json!({"role": "user", "content": "q".repeat(10)})),
        entry(
            "a1",
            json!({"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "thinking", "thinking": "t".repeat(1000), "thinkingSignature": "s".repeat(400)},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}]}),
        ),
        entry(
            "r1",
            json!({"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                "content": [{"type": "text", "text": "o".repeat(5000)}]}),
        ),
        entry("b1", json!({"role": "bashExecution", "command": "cargo test", "output": "x".repeat(3000)})),
        entry(
            "b2",
            json!({"role": "bashExecution", "command": "env", "output": "y".repeat(9000), "excludeFromContext": true}),
        ),
        entry("a2", json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "done"}]})),
    ]
}

#[test]
fn the_rewrite_measure_counts_thinking_and_shell_commands() {
    let entries = session();
    let codex =
        MainModel { provider: "openai-codex".into(), api: "openai-codex-responses".into(), ..MainModel::default() };
    // The prompt 10; thinking 1,000 + 400 / 2 and the call "bash" + `{"command":"ls"}`
    // (4 + 16): 1,220; the output 5,000; `cargo test` and its output 3,010; the `!!`
    // command nothing; "done" 4.
    assert_eq!(rewrite(&codex, &entries).whole(), 10 + 1220 + 5000 + 3010 + 4);
    // A prefix cache rewrites from the first edited entry: from the shell command on.
    let other = MainModel { provider: "faux".into(), api: "faux".into(), ..MainModel::default() };
    assert_eq!(rewrite(&other, &entries).from(3), 3010 + 4);
}

#[test]
fn an_exchange_counts_its_thinking() {
    // The exchange's editable entries: the prompt, the assistant messages (thinking
    // included) and the tool result; a `!` command stays when an exchange is omitted,
    // so it is not part of its size.
    let span = spans(&session(), 6).remove(0);
    assert_eq!(span.chars, 10 + 1220 + 5000 + 4);
}
