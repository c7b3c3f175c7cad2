//! `read_file {file_path, start_line?, end_line?, max_bytes?}`: a line range
//! of a UTF-8 text file with the whole file's hash and line count.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolSpec, bounded, not_found, parse_args};
use crate::workspace::{ReadRange, read_text_range};

pub const READ_FILE: &str = "read_file";

pub struct ReadFile;

#[derive(Deserialize)]
struct Args {
    file_path: String,
    start_line: Option<usize>,
    end_line: Option<usize>,
    max_bytes: Option<usize>,
}

impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec::read(
            READ_FILE,
            "Read a UTF-8 text file, or a range of its lines (1-based, inclusive). \
                Returns the content with its line endings, the range actually returned, the \
                file's total_lines and file_hash (sha256 of the whole file). When end_line is \
                below total_lines, call again with start_line = end_line + 1 for more.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "minLength": 1, "description": "Path relative to the agent root, e.g. \"src/main.rs\"."},
                    "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based). Default 1."},
                    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to return (inclusive). Default: a configured number of lines."},
                    "max_bytes": {"type": "integer", "minimum": 1, "description": "Most bytes of content to return (capped by the configuration)."}
                },
                "required": ["file_path"],
                "additionalProperties": false
            }),
        )
    }

    fn run(&self, ctx: &ToolContext<'_>, args: Value) -> Result<Value, ToolError> {
        let args: Args = parse_args(args)?;
        let limits = ctx.limits;
        let start_line = args.start_line.unwrap_or(1);
        if let Some(end) = args.end_line
            && end < start_line
        {
            return Err(ToolError::invalid(
                "end_line",
                format!("{end} is before start_line {start_line}"),
            ));
        }
        let resolved = ctx.workspace.resolve(&args.file_path)?;
        // One handle, opened beneath the root: what is checked is what is read.
        let opened = ctx
            .workspace
            .open_file(&resolved)
            .and_then(|f| f.metadata().map(|m| (f, m)));
        let (file, meta) = match opened {
            Ok(pair) => pair,
            // Below a file (`src/main.rs/x`) nothing exists either.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(not_found(ctx, &resolved));
            }
            Err(e) => return Err(ToolError::io(resolved.display(), e)),
        };
        let path = resolved.display().to_string();
        if meta.is_dir() {
            return Err(ToolError::IsADirectory { path });
        }
        if !meta.is_file() {
            return Err(ToolError::NotAFile { path });
        }
        let range = ReadRange {
            start_line,
            end_line: args.end_line,
            max_lines: limits.max_read_lines_default,
            max_bytes: bounded(
                args.max_bytes,
                limits.max_read_bytes_default,
                limits.max_read_bytes_cap,
            ),
        };
        let slice = read_text_range(file, range).map_err(|e| ToolError::decode(&path, e))?;
        let mut out = json!({
            "file_path": path,
            "content": slice.content,
            "start_line": slice.start_line,
            "end_line": slice.end_line,
            "total_lines": slice.total_lines,
            "file_hash": slice.file_hash,
        });
        if slice.line_cut {
            // Never taken for the whole line (an old_text copied from it
            // would not match).
            out["line_cut"] = json!(true);
            out["note"] = json!(format!(
                "line {} is longer than max_bytes and was cut: content is only its start; \
                 read it with a larger max_bytes to see all of it",
                slice.end_line
            ));
        }
        Ok(out)
    }
}
