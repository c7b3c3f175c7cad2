//! Every key binding in one table: the app looks keys up here, and the help
//! overlay and status-bar hints are generated from it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    FocusNext,
    FocusPrev,
    CycleMode,
    Send,
    /// Run the input after the current job.
    Queue,
    /// Take the last queued message back into the input.
    Unqueue,
    Newline,
    Cancel,
    OpenReview,
    Down,
    Up,
    Open,
    Accept,
    Reject,
    AcceptFile,
    RejectFile,
    Apply,
    Rollback,
    RollbackAll,
    PickHunks,
    ToggleChoice,
    Confirm,
    Pin,
    Complete,
    PasteImage,
    ToggleDetails,
    Checkpoints,
    WholeFile,
    Verify,
    Feedback,
    MarkRange,
    EditHunk,
    SaveEdit,
    Allow,
    Deny,
    CopyMessage,
    CopyCode,
    ScrollUp,
    ScrollDown,
    PageUp,
    PageDown,
    Help,
    OpenRoot,
    Find,
    Quit,
}

impl Action {
    /// The name used in the config's `[keys]` table.
    pub fn name(self) -> &'static str {
        match self {
            Action::FocusNext => "focus_next",
            Action::FocusPrev => "focus_prev",
            Action::CycleMode => "cycle_mode",
            Action::Send => "send",
            Action::Queue => "queue",
            Action::Unqueue => "unqueue",
            Action::Newline => "newline",
            Action::Cancel => "cancel",
            Action::OpenReview => "open_review",
            Action::Down => "down",
            Action::Up => "up",
            Action::Open => "open",
            Action::Accept => "accept",
            Action::Reject => "reject",
            Action::AcceptFile => "accept_file",
            Action::RejectFile => "reject_file",
            Action::Apply => "apply",
            Action::Rollback => "rollback",
            Action::RollbackAll => "rollback_all",
            Action::PickHunks => "pick_hunks",
            Action::ToggleChoice => "toggle_choice",
            Action::Confirm => "confirm",
            Action::Pin => "pin",
            Action::Complete => "complete",
            Action::PasteImage => "paste_image",
            Action::ToggleDetails => "toggle_details",
            Action::Checkpoints => "checkpoints",
            Action::WholeFile => "whole_file",
            Action::Verify => "verify",
            Action::Feedback => "feedback",
            Action::MarkRange => "mark_range",
            Action::EditHunk => "edit_hunk",
            Action::SaveEdit => "save_edit",
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::CopyMessage => "copy_message",
            Action::CopyCode => "copy_code",
            Action::ScrollUp => "scroll_up",
            Action::ScrollDown => "scroll_down",
            Action::PageUp => "page_up",
            Action::PageDown => "page_down",
            Action::Help => "help",
            Action::OpenRoot => "open_root",
            Action::Find => "find",
            Action::Quit => "quit",
        }
    }
}

/// Where a binding applies; `Global` applies everywhere unless a more
/// specific binding for the same key matches first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Global,
    Tree,
    Chat,
    Input,
    Review,
    RollbackDialog,
    Preview,
    Checkpoints,
    Sessions,
    /// The in-app editor of a hunk's text (`e` in the review).
    HunkEditor,
    /// The approval dialog of a command.
    Approval,
}

pub struct Binding {
    pub context: Context,
    pub code: KeyCode,
    pub mods: KeyModifiers,
    /// How the key is written in help.
    pub label: &'static str,
    pub action: Action,
    pub help: &'static str,
}

const fn bind(
    context: Context,
    code: KeyCode,
    mods: KeyModifiers,
    label: &'static str,
    action: Action,
    help: &'static str,
) -> Binding {
    Binding {
        context,
        code,
        mods,
        label,
        action,
        help,
    }
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const ALT: KeyModifiers = KeyModifiers::ALT;

/// The bindings, most specific first. SPEC section 10.
#[rustfmt::skip]
pub const BINDINGS: &[Binding] = &[
    bind(Context::Review, KeyCode::Char('j'), NONE, "j / ↓", Action::Down, "next hunk"),
    bind(Context::Review, KeyCode::Down, NONE, "j / ↓", Action::Down, "next hunk"),
    bind(Context::Review, KeyCode::Char('k'), NONE, "k / ↑", Action::Up, "previous hunk"),
    bind(Context::Review, KeyCode::Up, NONE, "k / ↑", Action::Up, "previous hunk"),
    bind(Context::Review, KeyCode::Char('y'), NONE, "y", Action::Accept, "accept the hunk"),
    bind(Context::Review, KeyCode::Char('n'), NONE, "n", Action::Reject, "reject the hunk"),
    bind(Context::Review, KeyCode::Char('Y'), SHIFT, "Y", Action::AcceptFile, "accept every hunk of the file"),
    bind(Context::Review, KeyCode::Char('N'), SHIFT, "N", Action::RejectFile, "reject every hunk of the file"),
    bind(Context::Review, KeyCode::Char('s'), CTRL, "Ctrl+S", Action::Apply, "apply the accepted hunks"),
    bind(Context::Review, KeyCode::Esc, NONE, "Esc", Action::Cancel, "stop the verify, else close the review"),
    bind(Context::Review, KeyCode::Char('v'), NONE, "v", Action::Verify, "verify the accepted hunks (scratch copy)"),
    bind(Context::Review, KeyCode::Char('f'), NONE, "f", Action::Feedback, "send a failed verify to the model"),
    bind(Context::RollbackDialog, KeyCode::Char('a'), NONE, "a", Action::RollbackAll, "roll back all of it (hard)"),
    bind(Context::RollbackDialog, KeyCode::Char('p'), NONE, "p", Action::PickHunks, "pick hunks to roll back (scoped)"),
    bind(Context::RollbackDialog, KeyCode::Char('j'), NONE, "j / ↓", Action::Down, "next hunk"),
    bind(Context::RollbackDialog, KeyCode::Down, NONE, "j / ↓", Action::Down, "next hunk"),
    bind(Context::RollbackDialog, KeyCode::Char('k'), NONE, "k / ↑", Action::Up, "previous hunk"),
    bind(Context::RollbackDialog, KeyCode::Up, NONE, "k / ↑", Action::Up, "previous hunk"),
    bind(Context::RollbackDialog, KeyCode::Char(' '), NONE, "Space", Action::ToggleChoice, "choose / unchoose the hunk"),
    bind(Context::RollbackDialog, KeyCode::Enter, NONE, "Enter", Action::Confirm, "roll back the chosen hunks"),
    bind(Context::Tree, KeyCode::Char('p'), NONE, "p", Action::Pin, "pin / unpin the file as chat context"),
    bind(Context::Preview, KeyCode::Char('p'), NONE, "p", Action::Pin, "pin / unpin the file as chat context"),
    bind(Context::Preview, KeyCode::Char('j'), NONE, "↑ / ↓", Action::ScrollDown, "scroll the preview"),
    bind(Context::Preview, KeyCode::Down, NONE, "↑ / ↓", Action::ScrollDown, "scroll the preview"),
    bind(Context::Preview, KeyCode::Char('k'), NONE, "↑ / ↓", Action::ScrollUp, "scroll the preview"),
    bind(Context::Preview, KeyCode::Up, NONE, "↑ / ↓", Action::ScrollUp, "scroll the preview"),
    bind(Context::Preview, KeyCode::PageDown, NONE, "PgUp / PgDn", Action::PageDown, "scroll a page"),
    bind(Context::Preview, KeyCode::PageUp, NONE, "PgUp / PgDn", Action::PageUp, "scroll a page"),
    bind(Context::Preview, KeyCode::Esc, NONE, "Esc", Action::Cancel, "close the preview"),
    bind(Context::Chat, KeyCode::Up, NONE, "↑ / ↓", Action::ScrollUp, "scroll the chat"),
    bind(Context::Chat, KeyCode::Char('k'), NONE, "↑ / ↓", Action::ScrollUp, "scroll the chat"),
    bind(Context::Chat, KeyCode::Down, NONE, "↑ / ↓", Action::ScrollDown, "scroll the chat"),
    bind(Context::Chat, KeyCode::Char('j'), NONE, "↑ / ↓", Action::ScrollDown, "scroll the chat"),
    bind(Context::Sessions, KeyCode::Char('j'), NONE, "j / ↓", Action::Down, "next session"),
    bind(Context::Sessions, KeyCode::Down, NONE, "j / ↓", Action::Down, "next session"),
    bind(Context::Sessions, KeyCode::Char('k'), NONE, "k / ↑", Action::Up, "previous session"),
    bind(Context::Sessions, KeyCode::Up, NONE, "k / ↑", Action::Up, "previous session"),
    bind(Context::Sessions, KeyCode::Enter, NONE, "Enter", Action::Confirm, "resume the session"),
    bind(Context::Sessions, KeyCode::Esc, NONE, "Esc", Action::Cancel, "start a new session instead"),
    bind(Context::Preview, KeyCode::Char('v'), NONE, "v", Action::MarkRange, "mark a line range (from here to the top line)"),
    bind(Context::Review, KeyCode::PageDown, NONE, "PgUp / PgDn", Action::PageDown, "scroll the hunk / whole file a page"),
    bind(Context::Review, KeyCode::PageUp, NONE, "PgUp / PgDn", Action::PageUp, "scroll the hunk / whole file a page"),
    bind(Context::Review, KeyCode::Char('d'), CTRL, "Ctrl+U / D", Action::PageDown, "scroll the hunk / whole file a page"),
    bind(Context::Review, KeyCode::Char('u'), CTRL, "Ctrl+U / D", Action::PageUp, "scroll the hunk / whole file a page"),
    bind(Context::Review, KeyCode::Char('J'), SHIFT, "J / K", Action::ScrollDown, "scroll the hunk / whole file a line"),
    bind(Context::Review, KeyCode::Char('K'), SHIFT, "J / K", Action::ScrollUp, "scroll the hunk / whole file a line"),
    bind(Context::Review, KeyCode::Char('w'), NONE, "w", Action::WholeFile, "toggle the whole file with changes inline"),
    bind(Context::Review, KeyCode::Char('e'), NONE, "e", Action::EditHunk, "edit the hunk's new text, then accept it"),
    bind(Context::HunkEditor, KeyCode::Char('s'), CTRL, "Ctrl+S", Action::SaveEdit, "keep the edited text and accept the hunk"),
    bind(Context::HunkEditor, KeyCode::Esc, NONE, "Esc", Action::Cancel, "discard the edit"),
    bind(Context::Approval, KeyCode::Char('y'), NONE, "y / Enter", Action::Allow, "allow the command once"),
    bind(Context::Approval, KeyCode::Enter, NONE, "y / Enter", Action::Allow, "allow the command once"),
    bind(Context::Approval, KeyCode::Char('n'), NONE, "n / Esc", Action::Deny, "deny it (the model is told)"),
    bind(Context::Approval, KeyCode::Esc, NONE, "n / Esc", Action::Deny, "deny it (the model is told)"),
    bind(Context::Checkpoints, KeyCode::Char('j'), NONE, "j / ↓", Action::Down, "next checkpoint / file"),
    bind(Context::Checkpoints, KeyCode::Down, NONE, "j / ↓", Action::Down, "next checkpoint / file"),
    bind(Context::Checkpoints, KeyCode::Char('k'), NONE, "k / ↑", Action::Up, "previous checkpoint / file"),
    bind(Context::Checkpoints, KeyCode::Up, NONE, "k / ↑", Action::Up, "previous checkpoint / file"),
    bind(Context::Checkpoints, KeyCode::Enter, NONE, "Enter", Action::Confirm, "open the three-way view"),
    bind(Context::Checkpoints, KeyCode::Esc, NONE, "Esc", Action::Cancel, "back / close"),
    bind(Context::Global, KeyCode::Char('k'), CTRL, "Ctrl+K", Action::Checkpoints, "list checkpoints (three-way view)"),
    bind(Context::Chat, KeyCode::Enter, NONE, "Enter", Action::ToggleDetails, "expand / fold tool calls and thinking"),
    bind(Context::Chat, KeyCode::Char('y'), NONE, "y", Action::CopyMessage, "copy the focused message (OSC 52)"),
    bind(Context::Chat, KeyCode::Char('Y'), SHIFT, "Y", Action::CopyCode, "copy its last code block (OSC 52)"),
    bind(Context::Chat, KeyCode::PageUp, NONE, "PgUp / PgDn", Action::PageUp, "scroll the chat a page"),
    bind(Context::Chat, KeyCode::PageDown, NONE, "PgUp / PgDn", Action::PageDown, "scroll the chat a page"),
    bind(Context::RollbackDialog, KeyCode::Esc, NONE, "Esc", Action::Cancel, "keep everything"),
    bind(Context::Tree, KeyCode::Char('j'), NONE, "j / ↓", Action::Down, "move down"),
    bind(Context::Tree, KeyCode::Down, NONE, "j / ↓", Action::Down, "move down"),
    bind(Context::Tree, KeyCode::Char('k'), NONE, "k / ↑", Action::Up, "move up"),
    bind(Context::Tree, KeyCode::Up, NONE, "k / ↑", Action::Up, "move up"),
    bind(Context::Tree, KeyCode::Enter, NONE, "Enter", Action::Open, "expand a folder / preview a file"),
    bind(Context::Input, KeyCode::Tab, NONE, "Tab", Action::Complete, "complete @path (else next pane)"),
    bind(Context::Input, KeyCode::Char('v'), CTRL, "Ctrl+V", Action::PasteImage, "attach the clipboard's image (wl-paste or xclip)"),
    bind(Context::Input, KeyCode::Enter, SHIFT, "Shift+Enter", Action::Newline, "new line"),
    bind(Context::Input, KeyCode::Enter, ALT, "Alt+Enter", Action::Newline, "new line"),
    bind(Context::Input, KeyCode::Enter, NONE, "Enter", Action::Send, "send; while a job runs, steer it (the model reads it at its next step)"),
    bind(Context::Input, KeyCode::Char('q'), CTRL, "Ctrl+Q", Action::Queue, "queue: run it after the current job ends"),
    bind(Context::Input, KeyCode::Up, ALT, "Alt+↑", Action::Unqueue, "take the last queued message back to edit it"),
    bind(Context::Global, KeyCode::Tab, NONE, "Tab", Action::FocusNext, "next pane"),
    bind(Context::Global, KeyCode::BackTab, SHIFT, "Shift+Tab", Action::FocusPrev, "previous pane"),
    bind(Context::Global, KeyCode::Char('t'), CTRL, "Ctrl+T", Action::CycleMode, "mode Ask → Plan → Agent"),
    bind(Context::Global, KeyCode::Char('r'), CTRL, "Ctrl+R", Action::OpenReview, "review the pending diff"),
    bind(Context::Global, KeyCode::Char('z'), CTRL, "Ctrl+Z", Action::Rollback, "roll back the latest checkpoint"),
    bind(Context::Global, KeyCode::Char('o'), CTRL, "Ctrl+O", Action::OpenRoot, "open another folder as the agent root"),
    bind(Context::Global, KeyCode::Char('p'), CTRL, "Ctrl+P", Action::Find, "find a file or a symbol by name; Enter opens it"),
    bind(Context::Global, KeyCode::Esc, NONE, "Esc", Action::Cancel, "cancel the job / close a dialog"),
    bind(Context::Global, KeyCode::F(1), NONE, "F1 / ?", Action::Help, "this help"),
    bind(Context::Global, KeyCode::Char('c'), CTRL, "Ctrl+C ×2", Action::Quit, "quit"),
];

/// The action of `key` in `context`, ignoring the default bindings of
/// actions `skip` says were rebound.
pub fn lookup_except(
    context: Context,
    key: &KeyEvent,
    skip: &dyn Fn(Action) -> bool,
) -> Option<Action> {
    let mods = key.modifiers & (CTRL | SHIFT | ALT);
    let same = |b: &Binding| {
        // Shift is implied by an upper-case letter or BackTab; terminals differ
        // in whether they report it.
        let shift_implied =
            matches!(b.code, KeyCode::Char(c) if c.is_uppercase()) || b.code == KeyCode::BackTab;
        b.code == key.code
            && (b.mods == mods || (shift_implied && mods.difference(SHIFT).is_empty()))
    };
    BINDINGS
        .iter()
        .filter(|b| b.context == context)
        .chain(BINDINGS.iter().filter(|b| b.context == Context::Global))
        .find(|b| !skip(b.action) && same(b))
        .map(|b| b.action)
}

/// Help rows (label, text, context), one per distinct label.
pub fn help_rows() -> Vec<(&'static str, &'static str, Context)> {
    let mut rows: Vec<(&'static str, &'static str, Context)> = Vec::new();
    for b in BINDINGS {
        if !rows.iter().any(|(l, h, _)| *l == b.label && *h == b.help) {
            rows.push((b.label, b.help, b.context));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(context: Context, key: &KeyEvent) -> Option<Action> {
        lookup_except(context, key, &|_| false)
    }

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn context_bindings_win_and_globals_apply_everywhere() {
        assert_eq!(
            lookup(Context::Review, &key(KeyCode::Char('j'), NONE)),
            Some(Action::Down)
        );
        assert_eq!(
            lookup(Context::Review, &key(KeyCode::Esc, NONE)),
            Some(Action::Cancel)
        );
        assert_eq!(
            lookup(Context::Input, &key(KeyCode::Enter, NONE)),
            Some(Action::Send)
        );
        assert_eq!(
            lookup(Context::Input, &key(KeyCode::Enter, SHIFT)),
            Some(Action::Newline)
        );
        assert_eq!(
            lookup(Context::Input, &key(KeyCode::Char('t'), CTRL)),
            Some(Action::CycleMode)
        );
        assert_eq!(
            lookup(Context::Input, &key(KeyCode::Char('j'), NONE)),
            None,
            "typing is not a binding"
        );
        assert_eq!(
            lookup(Context::Review, &key(KeyCode::Char('Y'), SHIFT)),
            Some(Action::AcceptFile)
        );
        assert_eq!(
            lookup(Context::Review, &key(KeyCode::Char('Y'), NONE)),
            Some(Action::AcceptFile)
        );
    }

    #[test]
    fn help_lists_every_spec_key() {
        let labels: Vec<&str> = help_rows().iter().map(|r| r.0).collect();
        for l in [
            "Tab",
            "Ctrl+T",
            "Enter",
            "Esc",
            "Ctrl+R",
            "j / ↓",
            "y",
            "Y",
            "Ctrl+S",
            "Ctrl+Z",
            "F1 / ?",
            "Ctrl+C ×2",
        ] {
            assert!(labels.contains(&l), "{l}");
        }
    }
}
