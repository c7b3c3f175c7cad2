//! Whether a tool call of the `individual` tier may run: refused by policy,
//! run at once (allow-listed), or the user is asked (`[approvals]`).

use serde_json::{Value, json};

use crate::config::{ApprovalPolicy, Config};
use crate::llm::ToolCall;
use crate::tools::{
    GIT_ADD, GIT_COMMIT, GIT_PUSH, RUN_COMMAND, WEB_FETCH, WEB_SEARCH, allowed, argv_of,
    inline_code,
};

/// What the agent loop does with a call that needs approval.
#[derive(Debug, PartialEq)]
pub enum Gate {
    /// Refused without asking; the error goes back to the model.
    Refuse(Value),
    /// Runs without asking (`auto`, or `allowlisted-auto` and on the allow list).
    Auto,
    /// The user decides this call alone.
    Ask,
    /// The user decides it together with the other batch calls of its turn.
    AskBatch,
}

/// The policy that governs tool `name`, and the config key that sets it.
pub fn policy_of(config: &Config, name: &str) -> (ApprovalPolicy, &'static str) {
    match name {
        _ if name.starts_with("mcp__") => (config.approvals.mcp, "approvals.mcp"),
        // Pushing leaves the machine: always asked on its own.
        GIT_PUSH => match config.approvals.git {
            ApprovalPolicy::Never => (ApprovalPolicy::Never, "approvals.git"),
            _ => (ApprovalPolicy::Individual, "approvals.git"),
        },
        GIT_ADD | GIT_COMMIT => (config.approvals.git, "approvals.git"),
        WEB_FETCH | WEB_SEARCH => (config.approvals.web, "approvals.web"),
        _ => (config.approvals.exec, "approvals.exec"),
    }
}

/// The command line a call amounts to, for the `[exec] allow` list.
fn argv_for(call: &ToolCall) -> Result<Option<Vec<String>>, Value> {
    let words = |v: &[&str]| Some(v.iter().map(|w| (*w).to_string()).collect());
    Ok(match call.name.as_str() {
        RUN_COMMAND => match call.arguments["command"].as_str() {
            Some(command) => Some(argv_of(command).map_err(|e| e.to_json()["error"].clone())?),
            None => None,
        },
        GIT_ADD => words(&["git", "add"]),
        GIT_COMMIT => words(&["git", "commit"]),
        _ => None,
    })
}

/// The gate for `call` under the configured policy. A command that could
/// not run anyway (it needs a shell) is refused before anyone is asked.
pub fn gate(config: &Config, call: &ToolCall) -> Gate {
    let (policy, key) = policy_of(config, &call.name);
    // A line a shell runs whole matches no allowlist: it is asked for.
    let shelled = call.name == RUN_COMMAND && config.exec.shell != crate::config::Shell::None;
    let argv = match argv_for(call) {
        _ if shelled => None,
        Ok(argv) => argv,
        Err(error) => return Gate::Refuse(error),
    };
    // Inline code is asked one by one, whatever the policy says.
    let inline = argv.as_ref().is_some_and(|a| inline_code(a).is_some());
    match policy {
        ApprovalPolicy::Never => Gate::Refuse(json!({
            "code": "not_approved",
            "message": format!(
                "`{}` is turned off in this project ({key} = \"never\"); do the task without it, \
                 or tell the user what to run themselves",
                call.name
            ),
        })),
        _ if inline => Gate::Ask,
        // Where nothing confines a command (Windows), each one is asked
        // for, whatever the policy or the allowlist says.
        _ if call.name == crate::tools::RUN_COMMAND
            && crate::tools::confine::Confinement::ask_always() =>
        {
            Gate::Ask
        }
        ApprovalPolicy::Auto => Gate::Auto,
        _ if allowed_domain(config, call) => Gate::Auto,
        ApprovalPolicy::AllowlistedAuto
            if argv
                .as_ref()
                .is_some_and(|a| allowed(a, &config.exec.allow)) =>
        {
            Gate::Auto
        }
        ApprovalPolicy::Batch => Gate::AskBatch,
        ApprovalPolicy::AllowlistedAuto | ApprovalPolicy::Individual => Gate::Ask,
    }
}

/// A `web_fetch` of a host in `[web] allow_domains`, or a `web_search`
/// whose service's host is (run unasked).
fn allowed_domain(config: &Config, call: &ToolCall) -> bool {
    let url = match call.name.as_str() {
        WEB_FETCH => call.arguments["url"].as_str(),
        WEB_SEARCH => config.web.search_url.as_deref(),
        _ => None,
    };
    url.and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(|h| config.web.domain_allowed(h)))
        .unwrap_or(false)
}

/// The error the model gets when the call was not allowed.
pub fn denied(call: &ToolCall, by: &str) -> Value {
    let what = call.arguments["command"]
        .as_str()
        .map_or_else(|| format!("`{}`", call.name), |c| format!("`{c}`"));
    let message = if by == "user" {
        format!(
            "the user did not allow {what}; do not try it again: continue without it, or say \
             what it would have shown"
        )
    } else if by.starts_with("decided by") {
        // A person on another front end (`decided by alice over HTTP`).
        format!(
            "the user did not allow {what} ({by}); do not try it again: continue without it, \
             or say what it would have shown"
        )
    } else {
        format!(
            "{what} needs the user's approval and nobody could be asked ({by}); continue \
             without it, or tell the user to run it or to allow it in [approvals]/[exec] allow"
        )
    };
    json!({ "code": "denied", "message": message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denial_says_who_denied_it() {
        let run = call("run_command", json!({"command": "rm -r build"}));
        let said = |by: &str| denied(&run, by)["message"].as_str().unwrap().to_string();
        assert!(said("user").starts_with("the user did not allow `rm -r build`"));
        let over_http = said("decided by alice over HTTP");
        assert!(
            over_http.starts_with("the user did not allow"),
            "{over_http}"
        );
        assert!(over_http.contains("alice"), "{over_http}");
        let headless = said("no_user: agent-tui exec cannot ask");
        assert!(headless.contains("nobody could be asked"), "{headless}");
    }

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            tool_call_id: "c1".into(),
            name: name.into(),
            arguments: args,
        }
    }

    #[test]
    fn policies_refuse_run_or_ask() {
        // Where nothing confines a command (Windows), each one is asked
        // for, whatever the policy and the allowlist say.
        let unasked = || {
            if crate::platform::sandbox::NO_CONFINEMENT {
                Gate::Ask
            } else {
                Gate::Auto
            }
        };
        let mut config = Config::default();
        let test = call(RUN_COMMAND, json!({"command": "cargo test -q"}));
        let push = call(RUN_COMMAND, json!({"command": "git push"}));
        assert_eq!(
            gate(&config, &test),
            Gate::Ask,
            "individual asks even for allowed"
        );
        config.approvals.exec = ApprovalPolicy::AllowlistedAuto;
        assert_eq!(gate(&config, &test), unasked());
        assert_eq!(gate(&config, &push), Gate::Ask);
        config.approvals.exec = ApprovalPolicy::Never;
        let Gate::Refuse(e) = gate(&config, &test) else {
            panic!()
        };
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("approvals.exec = \"never\"")
        );
        // A command that needs a shell is refused before asking.
        config.approvals.exec = ApprovalPolicy::Individual;
        let piped = call(RUN_COMMAND, json!({"command": "ls | wc -l"}));
        assert!(matches!(gate(&config, &piped), Gate::Refuse(_)));
        // An allow-listed shell or interpreter with inline code is asked.
        config.approvals.exec = ApprovalPolicy::AllowlistedAuto;
        config.exec.allow = vec!["sh".into(), "python3".into(), "cargo".into()];
        let inline = call(RUN_COMMAND, json!({"command": "sh -c 'touch /tmp/x'"}));
        assert_eq!(gate(&config, &inline), Gate::Ask);
        let script = call(RUN_COMMAND, json!({"command": "python3 -m pytest"}));
        assert_eq!(gate(&config, &script), unasked());
        // `auto` runs without asking, but inline code is still asked.
        config.approvals.exec = ApprovalPolicy::Auto;
        assert_eq!(gate(&config, &push), unasked());
        assert_eq!(gate(&config, &inline), Gate::Ask);
        // Git: add and commit follow approvals.git (batch by default); push
        // is always asked alone.
        let add = call(GIT_ADD, json!({"paths": ["a"]}));
        let git_push = call(GIT_PUSH, json!({}));
        assert_eq!(gate(&Config::default(), &add), Gate::AskBatch);
        config.approvals.git = ApprovalPolicy::Auto;
        assert_eq!(gate(&config, &add), Gate::Auto);
        assert_eq!(gate(&config, &git_push), Gate::Ask);
        config.approvals.git = ApprovalPolicy::AllowlistedAuto;
        config.exec.allow = vec!["git add".into()];
        assert_eq!(gate(&config, &add), Gate::Auto);
        assert_eq!(gate(&config, &call(GIT_COMMIT, json!({}))), Gate::Ask);
        config.approvals.git = ApprovalPolicy::Never;
        assert!(matches!(gate(&config, &git_push), Gate::Refuse(_)));
        // MCP tools follow approvals.mcp.
        config.approvals.mcp = ApprovalPolicy::Never;
        assert!(matches!(
            gate(&config, &call("mcp__fs__write", json!({}))),
            Gate::Refuse(_)
        ));
    }
}
