//! `[providers.NAME] vision` (SPEC 20): whether the model reads images;
//! `"auto"` (the default) asks the server, `true` / `false` say it.

use serde::{Deserialize, Deserializer, Serialize};

/// Whether a provider's model reads images (SPEC 20): `"auto"` asks its
/// server (llama.cpp `/props`, Ollama `/api/show`, the models list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vision {
    #[default]
    Auto,
    Yes,
    No,
}

impl Serialize for Vision {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Vision::Auto => s.serialize_str("auto"),
            Vision::Yes => s.serialize_bool(true),
            Vision::No => s.serialize_bool(false),
        }
    }
}

impl<'de> Deserialize<'de> for Vision {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Vision, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Flag(bool),
            Word(String),
        }
        match Written::deserialize(de)? {
            Written::Flag(true) => Ok(Vision::Yes),
            Written::Flag(false) => Ok(Vision::No),
            Written::Word(w) if w == "auto" => Ok(Vision::Auto),
            Written::Word(w) => Err(D::Error::custom(format!(
                "vision = \"{w}\": expected \"auto\", true or false"
            ))),
        }
    }
}
