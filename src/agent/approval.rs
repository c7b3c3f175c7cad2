//! Whether a tool call of the `individual` tier may run: refused by policy,
//! run at once (allow-listed), or the user is asked (`[approvals]`).

use serde_json::{Value, json};

use crate::config::{ApprovalPolicy, Config};
use crate::llm::ToolCall;
use crate::tools::{RUN_COMMAND, allowed, argv_of, inline_code};

/// What the agent loop does with a call that needs approval.
#[derive(Debug, PartialEq)]
pub enum Gate {
    /// Refused without asking; the error goes back to the model.
    Refuse(Value),
    /// Runs without asking (`allowlisted-auto` and on the allow list).
    Auto,
    /// The user decides.
    Ask,
}

/// The gate for `call` under the configured policy. A command that could
/// not run anyway (it needs a shell) is refused before anyone is asked.
pub fn gate(config: &Config, call: &ToolCall) -> Gate {
    let is_mcp = call.name.starts_with("mcp__");
    let (policy, key) = if is_mcp {
        (config.approvals.mcp, "approvals.mcp")
    } else {
        (config.approvals.exec, "approvals.exec")
    };
    let argv = match call.arguments["command"].as_str() {
        Some(command) if call.name == RUN_COMMAND => match argv_of(command) {
            Ok(argv) => Some(argv),
            Err(e) => return Gate::Refuse(e.to_json()["error"].clone()),
        },
        _ => None,
    };
    match policy {
        ApprovalPolicy::Never => Gate::Refuse(json!({
            "code": "not_approved",
            "message": format!(
                "`{}` is turned off in this project ({key} = \"never\"); do the task without it, \
                 or tell the user what to run themselves",
                call.name
            ),
        })),
        // Inline code is asked one by one, whatever the allow list says.
        ApprovalPolicy::AllowlistedAuto
            if argv
                .as_ref()
                .is_some_and(|a| allowed(a, &config.exec.allow) && inline_code(a).is_none()) =>
        {
            Gate::Auto
        }
        ApprovalPolicy::AllowlistedAuto | ApprovalPolicy::Individual => Gate::Ask,
    }
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

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            tool_call_id: "c1".into(),
            name: name.into(),
            arguments: args,
        }
    }

    #[test]
    fn policies_refuse_run_or_ask() {
        let mut config = Config::default();
        let test = call(RUN_COMMAND, json!({"command": "cargo test -q"}));
        let push = call(RUN_COMMAND, json!({"command": "git push"}));
        assert_eq!(
            gate(&config, &test),
            Gate::Ask,
            "individual asks even for allowed"
        );
        config.approvals.exec = ApprovalPolicy::AllowlistedAuto;
        assert_eq!(gate(&config, &test), Gate::Auto);
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
        assert_eq!(gate(&config, &script), Gate::Auto);
        // MCP tools follow approvals.mcp.
        config.approvals.mcp = ApprovalPolicy::Never;
        assert!(matches!(
            gate(&config, &call("mcp__fs__write", json!({}))),
            Gate::Refuse(_)
        ));
    }
}
