//! A list of many paths kept compactly (one text buffer and the end of each
//! path in it): `@` completion holds every file of a large tree this way,
//! a few bytes per path over the text itself. On the wire it is a plain
//! JSON array of strings.

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Paths in the order they were pushed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathList {
    text: String,
    ends: Vec<u32>,
}

impl PathList {
    pub fn new() -> PathList {
        PathList::default()
    }

    /// Appends `path`; false (and nothing kept) once the text would pass
    /// 4 GiB, the most one list holds.
    pub fn push(&mut self, path: &str) -> bool {
        let Ok(end) = u32::try_from(self.text.len() + path.len()) else {
            return false;
        };
        self.text.push_str(path);
        self.ends.push(end);
        true
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`th path.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        self.text.get(start..end)
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// Gives back the room grown beyond what the paths take.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

impl<S: AsRef<str>> FromIterator<S> for PathList {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> PathList {
        let mut list = PathList::new();
        for path in iter {
            if !list.push(path.as_ref()) {
                break;
            }
        }
        list
    }
}

impl Serialize for PathList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for path in self.iter() {
            seq.serialize_element(path)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for PathList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PathList, D::Error> {
        struct Paths;
        impl<'de> Visitor<'de> for Paths {
            type Value = PathList;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of paths")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PathList, A::Error> {
                let mut list = PathList::new();
                while let Some(path) = seq.next_element::<std::borrow::Cow<'de, str>>()? {
                    if !list.push(&path) {
                        return Err(serde::de::Error::custom("paths over 4 GiB"));
                    }
                }
                Ok(list)
            }
        }
        deserializer.deserialize_seq(Paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_back_in_order_and_as_a_json_array() {
        let list: PathList = ["src/main.rs", "", "@docs/guide.md"].into_iter().collect();
        assert_eq!(list.len(), 3);
        assert_eq!(list.get(1), Some(""));
        assert_eq!(list.get(3), None);
        assert_eq!(
            list.iter().collect::<Vec<_>>(),
            ["src/main.rs", "", "@docs/guide.md"]
        );
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(json, r#"["src/main.rs","","@docs/guide.md"]"#);
        let back: PathList = serde_json::from_str(&json).unwrap();
        assert_eq!(back, list);
        assert!(serde_json::from_str::<PathList>(r#"["a", 1]"#).is_err());
    }
}
