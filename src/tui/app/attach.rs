//! Images that go with the next message (SPEC 20): a root's image
//! completed with Tab (`@shot.png`), a pasted image path, the clipboard
//! (Ctrl+V). Each is marked in the input by a token (`@path`, `[image
//! NAME]`), shows as a chip while its token is there, and goes with the
//! message that holds it; deleting the token drops the image.

use std::path::PathBuf;

use super::{App, Entry, Load};
use crate::protocol::{ImageInput, ImageMeta};

/// Where an image comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageFrom {
    /// A file of the root, completed or typed as `@path`.
    Root(String),
    /// A file the user pasted the path of (anywhere on this machine).
    File(PathBuf),
    /// The clipboard (Ctrl+V).
    Clipboard,
}

/// An image attached to the message being typed.
#[derive(Debug, Clone, PartialEq)]
struct Attachment {
    /// What marks it in the input.
    token: String,
    input: ImageInput,
    meta: ImageMeta,
}

/// The images of the message being typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attached {
    list: Vec<Attachment>,
    /// Clipboard images so far, to name the next one.
    pasted: u32,
}

const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// Whether a file name is an image's.
pub fn is_image_name(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// A pasted text that is one image file's path (quoted, `file://`, or with
/// `\ ` escapes, as terminals and file managers paste them).
pub fn pasted_image_path(text: &str) -> Option<PathBuf> {
    let t = text.trim();
    if t.is_empty() || t.contains('\n') {
        return None;
    }
    let t = t
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| t.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .unwrap_or(t);
    let t = t.strip_prefix("file://").unwrap_or(t);
    let path = PathBuf::from(t.replace("\\ ", " "));
    let name = path.file_name()?.to_string_lossy().into_owned();
    (is_image_name(&name) && crate::agent::expand_home(&path.to_string_lossy()).is_file())
        .then(|| crate::agent::expand_home(&path.to_string_lossy()))
}

impl Attached {
    /// Chips of the images whose token the input holds.
    pub fn chips(&self, text: &str) -> Vec<String> {
        self.list
            .iter()
            .filter(|a| text.contains(&a.token))
            .map(|a| a.meta.chip())
            .collect()
    }

    /// The images of a message being sent: those whose token it holds,
    /// and any `@image` of the root it names; the list is emptied.
    pub fn take(&mut self, text: &str, paths: &crate::protocol::PathList) -> Vec<ImageInput> {
        let mut inputs: Vec<ImageInput> = std::mem::take(&mut self.list)
            .into_iter()
            .filter(|a| text.contains(&a.token))
            .map(|a| a.input)
            .collect();
        for word in text.split_whitespace() {
            let Some(path) = word.strip_prefix('@') else {
                continue;
            };
            let path = path.trim_end_matches([',', '.', ';', ':', '?', '!', ')']);
            let named = ImageInput::Path {
                path: path.to_string(),
            };
            if is_image_name(path) && paths.iter().any(|p| p == path) && !inputs.contains(&named) {
                inputs.push(named);
            }
        }
        inputs
    }
}

impl App {
    /// Asks for an image (its meta, or its bytes) off the UI task.
    pub(super) fn attach(&mut self, from: ImageFrom) {
        self.loads.push(Load::Image(from));
    }

    /// An image read for the message being typed: marked in the input
    /// (a root's `@path` is there already) and shown as a chip; or why not.
    pub(super) fn image_loaded(
        &mut self,
        from: ImageFrom,
        result: Result<(ImageInput, ImageMeta), String>,
    ) {
        let (input, mut meta) = match result {
            Ok(read) => read,
            Err(why) => {
                self.transcript
                    .push(Entry::Error(format!("No image attached: {why}")));
                return;
            }
        };
        let token = match &from {
            ImageFrom::Root(path) => format!("@{path}"),
            ImageFrom::Clipboard => {
                self.attached.pasted += 1;
                let ext = meta
                    .media_type
                    .trim_start_matches("image/")
                    .replace("jpeg", "jpg");
                meta.name = format!("clipboard-{}.{ext}", self.attached.pasted);
                let token = format!("[image {}]", meta.name);
                self.input.insert_str(format!("{token} "));
                token
            }
            ImageFrom::File(_) => {
                let token = format!("[image {}]", meta.name);
                self.input.insert_str(format!("{token} "));
                token
            }
        };
        let input = match input {
            ImageInput::Data {
                media_type,
                data_base64,
                ..
            } => ImageInput::Data {
                name: meta.name.clone(),
                media_type,
                data_base64,
            },
            path => path,
        };
        self.status_note = Some(format!("Attached {}", meta.chip()));
        self.attached.list.retain(|a| a.token != token);
        self.attached.list.push(Attachment { token, input, meta });
    }

    /// Chips of what the message being typed will carry.
    pub fn image_chips(&self) -> Vec<String> {
        self.attached.chips(&self.input.lines().join("\n"))
    }

    /// The chips shown under a message sent with images.
    pub(super) fn show_images(&mut self, images: &[ImageMeta]) {
        if images.is_empty() {
            return;
        }
        let chips = images.iter().map(ImageMeta::chip).collect();
        self.transcript.push(Entry::Images(chips));
    }

    /// `job.started` says what the model counts for the images the chat
    /// shows under the message: the chips say it too.
    pub(super) fn images_counted(&mut self, images: &[ImageMeta]) {
        if images.is_empty() {
            return;
        }
        let last_user = self
            .transcript
            .iter()
            .rposition(|e| matches!(e, Entry::User(_)));
        let Some(at) = last_user else { return };
        let chips: Vec<String> = images.iter().map(ImageMeta::chip).collect();
        match self.transcript.get_mut(at + 1) {
            Some(Entry::Images(shown)) => *shown = chips,
            Some(Entry::Pinned(_)) => match self.transcript.get_mut(at + 2) {
                Some(Entry::Images(shown)) => *shown = chips,
                _ => self.transcript.insert(at + 2, Entry::Images(chips)),
            },
            _ => self.transcript.insert(at + 1, Entry::Images(chips)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_and_pasted_paths() {
        assert!(is_image_name("a/b/Shot.PNG"));
        assert!(is_image_name("x.webp"));
        assert!(!is_image_name("notes.txt"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("my shot.png");
        std::fs::write(&file, b"x").unwrap();
        let plain = file.display().to_string();
        assert_eq!(pasted_image_path(&plain), Some(file.clone()));
        assert_eq!(
            pasted_image_path(&format!("'{plain}'\n")),
            Some(file.clone())
        );
        assert_eq!(
            pasted_image_path(&format!("file://{plain}")),
            Some(file.clone())
        );
        assert_eq!(
            pasted_image_path(&plain.replace(' ', "\\ ")),
            Some(file.clone())
        );
        assert_eq!(pasted_image_path("look at my shot.png please"), None);
        assert_eq!(pasted_image_path(&format!("{plain}\n{plain}")), None);
    }
}
