//! A config's sections are tables: serde's derived structs also take an
//! array and fill their fields by position (`server = ["0.0.0.0:80"]` read
//! as `[server] bind`), so a key the parsed config holds as a table but the
//! file wrote as an array is refused by its dotted name.

/// What a misshapen key is told.
pub const MISSHAPEN: &str = "expected a table, found an array";

/// Where `text` (already parsed into `config`) wrote an array for a
/// table: one problem each, as `agent: expected a table, ...`.
pub fn problems<T: serde::Serialize>(text: &str, config: &T) -> Vec<String> {
    misshapen(text, config)
        .into_iter()
        .map(|key| format!("{key}: {MISSHAPEN}"))
        .collect()
}

/// The dotted keys (`hooks.run[0].match`) `text` wrote as an array where
/// `config` holds a table.
pub fn misshapen<T: serde::Serialize>(text: &str, config: &T) -> Vec<String> {
    let (Ok(raw), Ok(toml::Value::Table(shaped))) = (
        toml::from_str::<toml::Table>(text),
        toml::Value::try_from(config),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk("", &raw, &shaped, &mut out);
    out
}

fn walk(prefix: &str, raw: &toml::Table, shaped: &toml::Table, out: &mut Vec<String>) {
    for (key, written) in raw {
        let Some(read) = shaped.get(key) else {
            continue;
        };
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        compare(&name, written, read, out);
    }
}

fn compare(name: &str, written: &toml::Value, read: &toml::Value, out: &mut Vec<String>) {
    match (written, read) {
        (toml::Value::Array(_), toml::Value::Table(_)) => {
            out.push(name.to_string());
        }
        (toml::Value::Table(written), toml::Value::Table(read)) => walk(name, written, read, out),
        (toml::Value::Array(written), toml::Value::Array(read)) => {
            for (i, (w, r)) in written.iter().zip(read).enumerate() {
                compare(&format!("{name}[{i}]"), w, r, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
    struct Outer {
        #[serde(default)]
        server: Inner,
        #[serde(default)]
        run: Vec<Inner>,
    }

    #[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
    struct Inner {
        #[serde(default)]
        bind: String,
        #[serde(default)]
        deep: Option<Box<Inner>>,
    }

    fn of(text: &str) -> Vec<String> {
        let config: Outer = toml::from_str(text).unwrap();
        problems(text, &config)
    }

    #[test]
    fn an_array_where_a_table_belongs_is_named() {
        assert_eq!(
            of("server = [\"0.0.0.0:80\"]\n"),
            ["server: expected a table, found an array"]
        );
        assert_eq!(
            of("[[run]]\nbind = \"a\"\ndeep = [\"b\"]\n"),
            ["run[0].deep: expected a table, found an array"]
        );
        assert!(of("[server]\nbind = \"x\"\n[server.deep]\nbind = \"y\"\n").is_empty());
        assert!(of("run = [{ bind = \"a\" }]\n").is_empty());
        assert_eq!(
            of("run = [{ bind = \"a\" }, [\"b\"]]\n"),
            ["run[1]: expected a table, found an array"]
        );
    }
}
