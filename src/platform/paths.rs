//! Names Windows reads differently from how they are written: device
//! names (`CON`, `NUL`, `COM1`, also with an extension), alternate data
//! streams (`a.txt:secret`, `::$DATA`), trailing dots and spaces (which
//! Windows strips, so `.git.` is `.git`), and 8.3 short names
//! (`PROGRA~1`, `GIT~1`), any of which could reach another file than the
//! one named. The check is pure, so every system tests it; the sandbox
//! applies it where the files live on Windows.

/// Why a path component is refused on Windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hazard {
    /// A device name (`CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`,
    /// `LPT0`-`LPT9`, `CONIN$`, `CONOUT$`), with or without an extension.
    DeviceName,
    /// A `:` names an alternate data stream (or a drive in the middle).
    DataStream,
    /// Ends in a dot or a space, which Windows drops.
    TrailingDotOrSpace,
    /// Looks like an 8.3 short name (`~` and digits), an alias of another.
    ShortName,
    /// A character Windows does not allow in a name (`<>"|?*`).
    ReservedChar,
}

impl Hazard {
    /// Why, in words for the model and the user.
    pub fn explain(self) -> &'static str {
        match self {
            Hazard::DeviceName => "is a Windows device name (CON, NUL, COM1 ...), not a file",
            Hazard::DataStream => {
                "has a `:`, which on Windows names an alternate data stream of another file"
            }
            Hazard::TrailingDotOrSpace => {
                "ends in a dot or a space, which Windows drops (it would be another file)"
            }
            Hazard::ShortName => {
                "looks like a Windows 8.3 short name (`~` and digits), which can alias another file"
            }
            Hazard::ReservedChar => "has a character Windows does not allow in names (<>\"|?*)",
        }
    }
}

/// Whether paths are checked for Windows' readings here.
pub const CHECK_WINDOWS_NAMES: bool = cfg!(windows);

/// What is wrong with `name` (one path component) on Windows, if anything.
pub fn windows_hazard(name: &str) -> Option<Hazard> {
    if name.contains(':') {
        return Some(Hazard::DataStream);
    }
    if name.contains(['<', '>', '"', '|', '?', '*']) {
        return Some(Hazard::ReservedChar);
    }
    if name != "." && name != ".." && (name.ends_with('.') || name.ends_with(' ')) {
        return Some(Hazard::TrailingDotOrSpace);
    }
    if is_device(name) {
        return Some(Hazard::DeviceName);
    }
    if is_short_name(name) {
        return Some(Hazard::ShortName);
    }
    None
}

/// `CON`, `nul.txt`, `COM1.tar.gz`, `LPT¹`: the stem before the first dot,
/// trailing spaces dropped, compared without case.
fn is_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" | "CLOCK$"
    ) {
        return true;
    }
    let Some(tail) = upper
        .strip_prefix("COM")
        .or_else(|| upper.strip_prefix("LPT"))
    else {
        return false;
    };
    let mut chars = tail.chars();
    matches!(
        (chars.next(), chars.next()),
        (Some('0'..='9' | '¹' | '²' | '³'), None)
    )
}

/// A base of 1-6 characters, `~`, then digits (`GIT~1`, `PROGRA~12.TXT`).
fn is_short_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    let Some(at) = stem.rfind('~') else {
        return false;
    };
    let digits = &stem[at + 1..];
    at >= 1 && !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// `rel` (a path relative to a root, as the system spells it) with `/`
/// between its parts, as every path inside agent-tui is written.
pub fn slashed(rel: &str) -> std::borrow::Cow<'_, str> {
    if cfg!(windows) && rel.contains('\\') {
        std::borrow::Cow::Owned(rel.replace('\\', "/"))
    } else {
        std::borrow::Cow::Borrowed(rel)
    }
}

/// The SQLite URL of a store file where sqlx's own spelling does not
/// round-trip (Windows: `sqlite://C:\...` parses as a host `C:`); `None`
/// where it does (Unix).
pub fn sqlite_url(path: &std::path::Path) -> Option<String> {
    if !cfg!(windows) {
        return None;
    }
    let mut out = String::from("sqlite:");
    for c in path.to_string_lossy().chars() {
        match c {
            '\\' => out.push('/'),
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3F"),
            '#' => out.push_str("%23"),
            ' ' => out.push_str("%20"),
            c => out.push(c),
        }
    }
    out.push_str("?mode=rwc");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_windows_reading_is_caught() {
        for (name, hazard) in [
            ("CON", Hazard::DeviceName),
            ("con.txt", Hazard::DeviceName),
            ("Nul.tar.gz", Hazard::DeviceName),
            ("COM1", Hazard::DeviceName),
            ("lpt9.log", Hazard::DeviceName),
            ("COM¹", Hazard::DeviceName),
            ("CONOUT$", Hazard::DeviceName),
            ("a.txt:secret", Hazard::DataStream),
            ("a.txt::$DATA", Hazard::DataStream),
            ("c:", Hazard::DataStream),
            (".git.", Hazard::TrailingDotOrSpace),
            ("main.rs ", Hazard::TrailingDotOrSpace),
            ("GIT~1", Hazard::ShortName),
            ("PROGRA~12.TXT", Hazard::ShortName),
            ("a?b", Hazard::ReservedChar),
            ("x|y", Hazard::ReservedChar),
        ] {
            assert_eq!(windows_hazard(name), Some(hazard), "{name}");
        }
    }

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "main.rs",
            "console.rs",
            "nullable.ts",
            "COM",
            "COM10",
            "com1x",
            "LPT",
            "~backup",
            "a~b",
            "file~",
            ".gitignore",
            ".",
            "..",
            "tilde~x1",
            "ÖØ󃏹XCĮ",
            "ýÓÚ0",
            "COMé",
            "Ö~1x",
            "日本語.rs",
        ] {
            assert_eq!(windows_hazard(name), None, "{name}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_name_is_judged_without_a_panic(name in "\\PC{0,12}") {
            let _ = windows_hazard(&name);
        }
    }
}
