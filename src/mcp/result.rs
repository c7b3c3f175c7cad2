//! A tool result from an MCP server as the model sees it: its text, any
//! structured content, other blocks described (an image by type and size),
//! all capped; a result the server marks as an error is an error.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

/// Turns `result` into the tool result, or the error, the model gets.
pub fn to_model(
    server: &str,
    tool: &str,
    result: CallToolResult,
    cap: usize,
) -> Result<Value, Value> {
    let mut text = String::new();
    let mut other = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t.text);
            }
            ContentBlock::Image(i) => other.push(json!({
                "type": "image", "mime_type": i.mime_type, "base64_bytes": i.data.len(),
            })),
            ContentBlock::Audio(a) => other.push(json!({
                "type": "audio", "mime_type": a.mime_type, "base64_bytes": a.data.len(),
            })),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents {
                    uri, text: body, ..
                } => {
                    other.push(json!({"type": "resource", "uri": uri, "text": cut(body, cap)}));
                }
                ResourceContents::BlobResourceContents { uri, blob, .. } => other.push(json!({
                    "type": "resource", "uri": uri, "base64_bytes": blob.len(),
                })),
                _ => other.push(json!({"type": "resource"})),
            },
            ContentBlock::ResourceLink(l) => other.push(json!({
                "type": "resource_link", "uri": l.uri, "name": l.name,
            })),
            _ => other.push(json!({"type": "unknown"})),
        }
    }
    let truncated = text.len() > cap;
    let text = cut(&text, cap);
    if result.is_error.unwrap_or(false) {
        return Err(json!({
            "code": "mcp_tool_error",
            "message": format!("MCP server `{server}`, tool `{tool}` reported an error: {text}"),
        }));
    }
    let mut out = json!({ "content": text });
    if truncated {
        out["truncated"] = json!(true);
    }
    if let Some(structured) = result.structured_content {
        let encoded = structured.to_string();
        out["structured_content"] = if encoded.len() > cap {
            json!(cut(&encoded, cap))
        } else {
            structured
        };
    }
    if !other.is_empty() {
        out["other_content"] = json!(other);
    }
    Ok(out)
}

/// `s` cut to at most `cap` bytes on a character boundary.
fn cut(s: &str, cap: usize) -> String {
    let mut end = cap.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}
