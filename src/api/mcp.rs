//! `hypermem mcp`: the operation layer as Model Context Protocol tools over stdio, on the
//! official Rust SDK (`rmcp`). Each tool is one [`Request`] operation; its input schema is
//! the request type's JSON schema (derived, so it cannot drift from what is accepted),
//! its result the operation's JSON (as text and as structured content). A refusal is a
//! tool error whose content is the same `{"error": {"reason", "message"}}` document the
//! CLI and HTTP return. `forget_project` runs only with `confirm: true`.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::{Api, ApiError, Request};
use crate::Memory;

/// The tool of operation `name` with the schema of request type `T`.
fn tool<T: schemars::JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    let object = schema.as_object().cloned().unwrap_or_default();
    Tool::new(name, description, Arc::new(object))
}

/// Every tool: (name = the operation's `op`, description, schema).
fn tools() -> Vec<Tool> {
    use super::*;
    vec![
        tool::<Observe>(
            "observe",
            "Record one observation (a message, a fact, an action) in a project's long-term memory. Returns its event id, which beliefs cite as evidence.",
        ),
        tool::<ObserveBatch>(
            "observe_batch",
            "Record several observations in one transaction (each names its project): all are stored or none. Returns their event ids in order.",
        ),
        tool::<Observe>(
            "record_event",
            "Record one observation, as `observe`, and return the whole stored event (id, time, session, thread) instead of its id alone.",
        ),
        tool::<Recall>(
            "recall",
            "Find the memories of a project that answer a query (free text, \"quoted phrases\", filters such as role:user since:2025-01-01). Returns ranked items with their score breakdown and source anchor.",
        ),
        tool::<Pack>(
            "pack",
            "Build a context pack for a query within a token budget (25 % of `available` by default, never above 30 %), with a receipt for every candidate.",
        ),
        tool::<BeliefAssert>(
            "belief_assert",
            "Assert a belief under a key, backed by evidence event ids of the same project (user-owned beliefs need a user event). The same statement again reinforces it; a different one is recorded as a possible conflict.",
        ),
        tool::<BeliefCorrect>(
            "belief_correct",
            "Correct the active belief of a key: the old version is superseded and its validity window closed.",
        ),
        tool::<BeliefKey>(
            "belief_current",
            "The active belief of a key; a key without one is a `not_found` error saying whether it has older versions.",
        ),
        tool::<BeliefAt>(
            "belief_at",
            "The belief of a key that was valid at a time (RFC 3339, a date, or epoch ms); none valid then is `not_found`.",
        ),
        tool::<BeliefKey>(
            "belief_history",
            "Every version of a key, oldest first; a key no belief ever had is `not_found`.",
        ),
        tool::<EpisodeStart>(
            "episode_start",
            "Start an episode for an agent (its open one is sealed and chained).",
        ),
        tool::<EpisodeAppend>(
            "episode_append",
            "Append a recorded event to an episode (once per event).",
        ),
        tool::<EpisodeEnd>(
            "episode_end",
            "Seal an episode with its outcome and reward.",
        ),
        tool::<ProcedureAdd>(
            "procedure_add",
            "Store a procedure: a name, a trigger (when to use it) and its steps.",
        ),
        tool::<ProcedureSuggest>(
            "procedure_suggest",
            "Procedures whose trigger matches a situation, weighted by their reliability.",
        ),
        tool::<ProcedureOutcome>(
            "procedure_outcome",
            "Record whether a procedure worked (success true or false).",
        ),
        tool::<ProspectivePropose>(
            "prospective_propose",
            "Record a pending intention, commitment, reminder, open loop or plan created by an event; it becomes active only when a later user event confirms it.",
        ),
        tool::<ProspectiveConfirm>(
            "prospective_confirm",
            "Confirm a pending item by a later, explicitly affirmative user event.",
        ),
        tool::<ProspectiveDefer>(
            "prospective_defer",
            "Postpone a prospective item to a new due time (`until`): a confirmed item becomes deferred, a pending one stays pending (deferring never confirms).",
        ),
        tool::<ProjectId64>(
            "prospective_complete",
            "Mark a confirmed prospective item done; its history keeps every transition.",
        ),
        tool::<ProjectId64>(
            "prospective_reject",
            "Refuse a pending or confirmed prospective item; it stays in history as rejected.",
        ),
        tool::<ProjectId64>(
            "prospective_show",
            "One prospective item with its status and history.",
        ),
        tool::<ProspectiveDue>(
            "prospective_due",
            "Confirmed items due at a time (default now).",
        ),
        tool::<ProjectLimit>(
            "gaps",
            "Knowledge gaps of a project: questions its memory could not answer well.",
        ),
        tool::<ProjectOnly>(
            "candidates",
            "Candidate beliefs the curator drew from what users said, waiting for approval: approve one with `candidate_approve` or drop it with `candidate_reject`.",
        ),
        tool::<ProjectId64>(
            "candidate_approve",
            "Promote a candidate belief to an active one, through a governed plan (refused with the rule it breaks, nothing written).",
        ),
        tool::<ProjectId64>(
            "candidate_reject",
            "Reject a candidate belief, through a governed plan; it stays in history as rejected.",
        ),
        tool::<ProjectLimit>(
            "associations",
            "Candidate associations pulse ticks found between episodes and concepts (by prototype similarity and ripple over synapses), newest first: candidates, never facts.",
        ),
        tool::<ProjectOnly>(
            "proposals",
            "Self-improvement proposals the meta-memory raised for a project (a rule over its metrics was crossed), with the metrics that triggered each, oldest first.",
        ),
        tool::<ProjectOnly>(
            "pulse",
            "Run one maintenance tick on a project now (tier moves, consolidation, decay, curation) within the profile's time budget; returns what each phase did.",
        ),
        tool::<Migrate>(
            "migrate",
            "Apply the pending schema migrations of this memory and report them (from and to versions); `dry_run: true` only reports.",
        ),
        tool::<MapRequest>(
            "map",
            "One project at a glance: sizes, time span, threads, episodes, concepts, beliefs, procedures.",
        ),
        tool::<Empty>(
            "stats",
            "Counts per project of this memory: events, vectors per tier, beliefs, episodes, procedures.",
        ),
        tool::<ForgetProject>(
            "forget_project",
            "Erase a project from every store. Cannot be undone: requires confirm = true.",
        ),
    ]
}

/// The MCP server over one [`Memory`].
#[derive(Clone)]
pub struct McpServer {
    memory: Arc<Memory>,
    tools: Arc<Vec<Tool>>,
}

impl McpServer {
    /// A server over `memory`.
    pub fn new(memory: Arc<Memory>) -> Self {
        Self {
            memory,
            tools: Arc::new(tools()),
        }
    }

    fn refused(e: &ApiError) -> CallToolResult {
        let doc = e.to_json();
        let mut result = CallToolResult::error(vec![ContentBlock::text(doc.to_string())]);
        result.structured_content = Some(doc);
        result
    }

    async fn call(&self, params: CallToolRequestParams) -> CallToolResult {
        let name = params.name.to_string();
        if !self.tools.iter().any(|t| t.name == name) {
            return Self::refused(&ApiError::new(
                "unknown_tool",
                format!("no tool `{name}` (see tools/list)"),
            ));
        }
        let mut args = params.arguments.unwrap_or_default();
        args.insert("op".to_owned(), Value::String(name));
        let request = match Request::from_json(Value::Object(args)) {
            Ok(r) => r,
            Err(e) => return Self::refused(&e),
        };
        let memory = self.memory.clone();
        let outcome = tokio::task::spawn_blocking(move || Api::new(&memory).execute(&request))
            .await
            .unwrap_or_else(|e| {
                Err(ApiError::new(
                    "internal",
                    format!("the operation failed inside the server: {e}"),
                ))
            });
        match outcome {
            Ok(value) => {
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
                // Structured content must be an object: wrap lists and nulls.
                result.structured_content = Some(if value.is_object() {
                    value
                } else {
                    serde_json::json!({ "result": value })
                });
                result
            }
            Err(e) => Self::refused(&e),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hypermem", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "hypermem is a governed long-term memory. `observe` what happens, `recall` or \
                 `pack` before answering, and keep durable facts as beliefs backed by evidence \
                 event ids (`belief_assert`, `belief_correct`). Every refusal carries a stable \
                 `reason`.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, McpError> {
        Ok(rmcp::model::CallToolResponse::Complete(
            self.call(request).await,
        ))
    }
}

/// Serves `memory` as MCP tools over stdin/stdout until the client closes the stream,
/// then flushes every store.
///
/// # Errors
/// `internal` when the runtime or the transport fails; store errors of the final flush.
pub fn serve_stdio(memory: Arc<Memory>) -> Result<(), ApiError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ApiError::new("internal", format!("cannot start the runtime: {e}")))?;
    let server = McpServer::new(memory.clone());
    runtime.block_on(async {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ApiError::new("internal", format!("MCP handshake failed: {e}")))?;
        service
            .waiting()
            .await
            .map_err(|e| ApiError::new("internal", format!("MCP service failed: {e}")))?;
        Ok::<(), ApiError>(())
    })?;
    drop(runtime);
    memory.flush()?;
    Ok(())
}
