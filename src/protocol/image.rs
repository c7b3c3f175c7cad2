//! Images that go with an instruction (SPEC 20): what a front end attaches
//! (`ImageInput`), what events and transcripts show of one (`ImageMeta`),
//! the checks every image passes (its format read from its bytes, a size
//! limit) and how many tokens a model reads for it.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The largest image accepted: Anthropic's own limit for one image (OpenAI
/// takes 20 MB); larger ones are refused with their size, never scaled.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// At most this many images go with one instruction.
pub const MAX_IMAGES: usize = 8;

/// An image attached to an instruction, as a front end sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ImageInput {
    /// The bytes themselves (a file the user named, the clipboard, a
    /// server run's `images`). `media_type` is informative: the bytes decide.
    Data {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
        data_base64: String,
    },
    /// A file of the workspace (`@shot.png`, a server run's `image_paths`),
    /// read by the engine through the root's sandbox.
    Path { path: String },
}

impl ImageInput {
    /// Bytes the front end read, named `name`.
    pub fn data(name: &str, bytes: &[u8]) -> ImageInput {
        ImageInput::Data {
            name: name.to_string(),
            media_type: None,
            data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// What it is called in messages.
    pub fn name(&self) -> &str {
        match self {
            ImageInput::Data { name, .. } => name,
            ImageInput::Path { path } => path,
        }
    }
}

/// What is shown and kept of an attached image; its bytes are in the store
/// under `sha256`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageMeta {
    pub name: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    pub bytes: u64,
    pub sha256: String,
    pub width: u32,
    pub height: u32,
    /// Tokens the job's model reads for it, once a job has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// `tokens` is an estimate (the server publishes no rule).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

/// Why an image was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("{name} is {} and images are limited to {}", size(*bytes), size(*limit))]
    TooLarge {
        name: String,
        bytes: u64,
        limit: u64,
    },
    #[error("{name} is not a PNG, JPEG, GIF or WebP image ({found})")]
    Unsupported { name: String, found: String },
    #[error("{name}: {why}")]
    Unreadable { name: String, why: String },
    #[error("at most {MAX_IMAGES} images go with one instruction ({given} given)")]
    TooMany { given: usize },
}

impl ImageMeta {
    /// Checks `data` (named `name`) is an image this product sends, and
    /// describes it.
    pub fn read(name: &str, data: &[u8]) -> Result<ImageMeta, ImageError> {
        let bytes = data.len() as u64;
        if bytes > MAX_IMAGE_BYTES {
            return Err(ImageError::TooLarge {
                name: name.to_string(),
                bytes,
                limit: MAX_IMAGE_BYTES,
            });
        }
        let unsupported = |found: String| ImageError::Unsupported {
            name: name.to_string(),
            found,
        };
        let media_type = match imagesize::image_type(data) {
            Ok(imagesize::ImageType::Png) => "image/png",
            Ok(imagesize::ImageType::Jpeg) => "image/jpeg",
            Ok(imagesize::ImageType::Gif) => "image/gif",
            Ok(imagesize::ImageType::Webp) => "image/webp",
            Ok(other) => return Err(unsupported(format!("{other:?}"))),
            Err(_) if data.is_empty() => return Err(unsupported("an empty file".into())),
            Err(_) => return Err(unsupported("unknown content".into())),
        };
        let dims = imagesize::blob_size(data).map_err(|e| ImageError::Unreadable {
            name: name.to_string(),
            why: format!("its header cannot be read ({e})"),
        })?;
        Ok(ImageMeta {
            name: name.to_string(),
            media_type: media_type.to_string(),
            bytes,
            sha256: hex(&Sha256::digest(data)),
            width: u32::try_from(dims.width).unwrap_or(u32::MAX),
            height: u32::try_from(dims.height).unwrap_or(u32::MAX),
            tokens: None,
            estimated: false,
        })
    }

    /// With the tokens a model counting by `rule` reads for it.
    pub fn counted(&self, rule: ImageRule) -> ImageMeta {
        ImageMeta {
            tokens: Some(rule.tokens(self.width, self.height)),
            estimated: !rule.exact(),
            ..self.clone()
        }
    }

    /// `red.png · PNG 16×16 · 68 B`, as a chip shows it.
    pub fn chip(&self) -> String {
        let kind = self
            .media_type
            .strip_prefix("image/")
            .unwrap_or(&self.media_type)
            .to_ascii_uppercase();
        let tokens = match (self.tokens, self.estimated) {
            (Some(n), false) => format!(" · {n} tok"),
            (Some(n), true) => format!(" · ~{n} tok (estimate)"),
            (None, _) => String::new(),
        };
        format!(
            "{} · {kind} {}×{} · {}{tokens}",
            self.name,
            self.width,
            self.height,
            size(self.bytes)
        )
    }
}

/// How a model counts an image's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageRule {
    /// Anthropic's documented rule: scaled to at most 1568 pixels on the
    /// long edge and about 1,600 tokens (1.2 megapixels), then width × height / 750.
    Anthropic,
    /// OpenAI's high-detail rule: fitted in 2048², the short side to 768,
    /// then 85 + 170 per 512-pixel tile.
    OpenAi,
    /// A server with no published rule (llama.cpp, Ollama, vLLM): OpenAI's
    /// rule as an estimate, said to be one.
    Estimate,
}

impl ImageRule {
    /// Tokens the model reads for a `width` × `height` image.
    pub fn tokens(self, width: u32, height: u32) -> u32 {
        let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
        match self {
            ImageRule::Anthropic => {
                let edge = (1568.0 / w.max(h)).min(1.0);
                let area = (1_200_000.0 / (w * h * edge * edge)).sqrt().min(1.0);
                let s = edge * area;
                ((w * s).round() * (h * s).round() / 750.0).ceil().max(1.0) as u32
            }
            ImageRule::OpenAi | ImageRule::Estimate => {
                let fit = (2048.0 / w.max(h)).min(1.0);
                let (w, h) = (w * fit, h * fit);
                let short = (768.0 / w.min(h)).min(1.0);
                let (w, h) = (w * short, h * short);
                let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
                85 + 170 * tiles as u32
            }
        }
    }

    /// Whether the count is the provider's own rule.
    pub fn exact(self) -> bool {
        self != ImageRule::Estimate
    }
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `68 B`, `12.5 KB`, `6.2 MB`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Decodes a `data_base64` field.
pub fn decode_base64(name: &str, text: &str) -> Result<Vec<u8>, ImageError> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| ImageError::Unreadable {
            name: name.to_string(),
            why: format!("data_base64 is not base64 ({e})"),
        })
}

/// Encodes bytes as standard base64 (data URLs, Anthropic blocks).
pub fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1×1 PNG.
    const PNG: &[u8] = &[
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0,
        0, 0, 3, 0, 0, 0, 2, 8, 6, 0, 0, 0, 0x1F, 0x15, 0xC4, 0x89,
    ];

    #[test]
    fn reads_format_and_size_from_the_bytes() {
        let meta = ImageMeta::read("a.jpg", PNG).expect("png");
        assert_eq!(meta.media_type, "image/png");
        assert_eq!((meta.width, meta.height), (3, 2));
        assert_eq!(meta.bytes, PNG.len() as u64);
        assert_eq!(meta.sha256.len(), 64);
        assert!(meta.chip().starts_with("a.jpg · PNG 3×2 · "));
        let counted = meta.counted(ImageRule::Estimate).chip();
        assert!(counted.ends_with(" · ~255 tok (estimate)"), "{counted}");
        assert!(
            meta.counted(ImageRule::OpenAi)
                .chip()
                .ends_with(" · 255 tok")
        );
    }

    #[test]
    fn refuses_what_is_not_an_image_or_too_large() {
        let e = ImageMeta::read("notes.txt", b"hello world").unwrap_err();
        assert!(
            e.to_string().contains("not a PNG, JPEG, GIF or WebP"),
            "{e}"
        );
        let mut big = PNG.to_vec();
        big.resize(MAX_IMAGE_BYTES as usize + 1, 0);
        let e = ImageMeta::read("big.png", &big).unwrap_err();
        assert_eq!(
            e.to_string(),
            "big.png is 5.0 MB and images are limited to 5.0 MB"
        );
        let bmp = [
            b'B', b'M', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert!(ImageMeta::read("x.bmp", &bmp).is_err());
    }

    #[test]
    fn token_rules() {
        // OpenAI's documented examples: 1024² is 765 tokens, 2048×4096 is
        // 1105; a small image is one tile.
        assert_eq!(ImageRule::OpenAi.tokens(1024, 1024), 765);
        assert_eq!(ImageRule::OpenAi.tokens(2048, 4096), 1105);
        assert_eq!(ImageRule::OpenAi.tokens(4, 3), 255);
        // Anthropic's: 1092×1092 is about 1590 tokens; 200×200 about 54.
        assert!((1580..=1600).contains(&ImageRule::Anthropic.tokens(1092, 1092)));
        assert_eq!(ImageRule::Anthropic.tokens(200, 200), 54);
        assert!(ImageRule::Anthropic.tokens(8000, 8000) <= 1600);
    }
}
