//! Keeping a conversation inside the model's context window (SPEC section
//! 11): the window and its source, token counts, caps on tool results, and
//! the pure part of compaction. The agent loop drives it; nothing here
//! talks to a model.

pub mod cap;
pub mod compact;
mod conversation;
mod tokens;
mod window;

pub use conversation::{Conversation, message_tokens};
pub use tokens::{Encoding, TokenCounter, estimate};
pub use window::{ContextWindow, DEFAULT_WINDOW, WindowSource, known_window};
