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

/// Every tool: one per operation of the [catalog](super::catalog).
fn tools() -> Vec<Tool> {
    super::catalog::catalog()
        .into_iter()
        .map(|op| {
            let object = op.schema.as_object().cloned().unwrap_or_default();
            Tool::new(op.name, op.description, Arc::new(object))
                .annotate(rmcp::model::ToolAnnotations::new().read_only(!op.writes))
        })
        .collect()
}

/// The MCP server over one [`Memory`], or over none: a memory that could not be opened
/// (held by another process, say) is answered to every tool call with the refusal that
/// kept it closed, so the client reads the named reason instead of a stream that ends.
#[derive(Clone)]
pub struct McpServer {
    memory: Result<Arc<Memory>, ApiError>,
    tools: Arc<Vec<Tool>>,
}

impl McpServer {
    /// A server over `memory`.
    pub fn new(memory: Arc<Memory>) -> Self {
        Self::over(Ok(memory))
    }

    /// A server over `memory`, or one that refuses every call with the error that kept
    /// the memory closed.
    pub fn over(memory: Result<Arc<Memory>, ApiError>) -> Self {
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
                crate::base::Reason::UnknownTool,
                format!("no tool `{name}` (see tools/list)"),
            ));
        }
        let mut args = params.arguments.unwrap_or_default();
        args.insert("op".to_owned(), Value::String(name));
        let request = match Request::from_json(Value::Object(args)) {
            Ok(r) => r,
            Err(e) => return Self::refused(&e),
        };
        let memory = match &self.memory {
            Ok(memory) => memory.clone(),
            Err(closed) => return Self::refused(closed),
        };
        let outcome = tokio::task::spawn_blocking(move || Api::new(&memory).execute(&request))
            .await
            .unwrap_or_else(|e| {
                Err(ApiError::new(
                    crate::base::Reason::Internal,
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

/// The parsed message of a `tools/call` request line; `None` for any other line.
fn tool_call(line: &str) -> Option<Value> {
    // Only a tool call is parsed here; the SDK parses every message anyway.
    if !line.contains("tools/call") {
        return None;
    }
    let message: Value = serde_json::from_str(line).ok()?;
    (message.get("method").and_then(Value::as_str) == Some("tools/call")).then_some(message)
}

/// The invalid-params error (-32602) of a tool call whose `arguments` is not an object, as
/// a JSON-RPC response line; `None` when its arguments are fine. The SDK would answer such
/// a call -32601 (method not found), which misleads a client about what went wrong.
fn invalid_arguments(call: &Value) -> Option<String> {
    let arguments = call.get("params")?.get("arguments")?;
    if arguments.is_object() || arguments.is_null() {
        return None;
    }
    Some(
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": call.get("id").cloned().unwrap_or(Value::Null),
            "error": {
                "code": -32602,
                "message": "invalid params: `arguments` must be a JSON object of the tool's fields",
            },
        })
        .to_string(),
    )
}

/// The parse error (-32700) answering a line that is not JSON, as a JSON-RPC response line
/// (`id` null: a line that does not parse has none); it names where parsing failed, never
/// echoing the line.
fn parse_error(line: &str) -> String {
    let detail = serde_json::from_str::<serde::de::IgnoredAny>(line)
        .err()
        .map(|e| format!(" at line {}, column {}", e.line(), e.column()))
        .unwrap_or_default();
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": Value::Null,
        "error": {"code": -32700, "message": format!("parse error: the line is not JSON{detail}")},
    })
    .to_string()
}

/// How long a tool call waits for the calls before it ([`Calls`]) before it runs anyway: a
/// call the SDK never answers (one the client cancelled, say) must not stop the session.
const ORDER_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The tool calls of the connection that are running, for read-your-writes ordering: the
/// SDK runs calls concurrently, so a `recall` sent right after an `observe`, without
/// waiting for its answer, could run first and miss it. A call that writes starts once
/// every earlier call has been answered; a call that reads, once every earlier write has.
/// Reads still run side by side.
#[derive(Default)]
struct Calls {
    /// Running calls by JSON-RPC id (its JSON text), and whether each writes.
    running: std::sync::Mutex<std::collections::HashMap<String, bool>>,
    /// Signalled whenever a call ends.
    ended: tokio::sync::Notify,
}

impl Calls {
    /// Whether a call that does (or does not) write may start now.
    fn clear_for(&self, writes: bool) -> bool {
        let running = self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if writes {
            running.is_empty()
        } else {
            !running.values().any(|&w| w)
        }
    }

    /// Waits (at most [`ORDER_WAIT`]) until a call that does (or does not) write may
    /// start, then records `id` as running.
    async fn start(&self, id: String, writes: bool) {
        let deadline = tokio::time::Instant::now() + ORDER_WAIT;
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            // Registered before the check, so an end between the two is not missed.
            ended.as_mut().enable();
            if self.clear_for(writes) {
                break;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                tracing::warn!(
                    id,
                    "an earlier tool call is still unanswered; this one runs anyway"
                );
                break;
            }
        }
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, writes);
    }

    /// The call `id` was answered (or cancelled).
    fn end(&self, id: &str) {
        let removed = self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id)
            .is_some();
        if removed {
            self.ended.notify_waiters();
        }
    }
}

/// The id (as JSON text) and tool name of a tool call.
fn call_id_and_name(call: &Value) -> Option<(String, &str)> {
    let id = call.get("id")?.to_string();
    let name = call.get("params")?.get("name")?.as_str()?;
    Some((id, name))
}

/// What [`ended_call`] reads of a line: its id and whether it is an answer, or the request
/// a cancellation names. The rest (a result can be large) is skipped, not built.
#[derive(serde::Deserialize)]
struct Ending {
    id: Option<Value>,
    method: Option<String>,
    params: Option<Cancelled>,
    result: Option<serde::de::IgnoredAny>,
    error: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct Cancelled {
    #[serde(rename = "requestId")]
    request_id: Option<Value>,
}

/// The id a line ends, as JSON text: a response's `id`, or the `requestId` of a
/// cancellation (a cancelled request gets no answer).
fn ended_call(line: &str) -> Option<String> {
    let message: Ending = serde_json::from_str(line).ok()?;
    if message.method.as_deref() == Some("notifications/cancelled") {
        return Some(message.params?.request_id?.to_string());
    }
    if message.result.is_some() || message.error.is_some() {
        return Some(message.id?.to_string());
    }
    None
}

/// stdin/stdout for the SDK, with each incoming line checked first ([`invalid_arguments`])
/// and tool calls started in the order they arrive ([`Calls`]): the SDK reads and writes
/// through in-process pipes, and one task writes every outgoing line (the SDK's and the
/// checks') to stdout, so lines never interleave.
fn checked_stdio() -> (
    (tokio::io::DuplexStream, tokio::io::DuplexStream),
    tokio::task::JoinHandle<()>,
) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let (mut to_sdk, sdk_in) = tokio::io::duplex(1 << 16);
    let (sdk_out, from_sdk) = tokio::io::duplex(1 << 16);
    let (lines, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = outgoing.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err()
                || stdout.write_all(b"\n").await.is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let replies = lines.clone();
    let calls = Arc::new(Calls::default());
    let answered = calls.clone();
    tokio::spawn(async move {
        let mut from_sdk = BufReader::new(from_sdk).lines();
        while let Ok(Some(line)) = from_sdk.next_line().await {
            if let Some(id) = ended_call(&line) {
                answered.end(&id);
            }
            if replies.send(line).is_err() {
                break;
            }
        }
    });
    let writes: std::collections::HashSet<&'static str> = super::catalog::catalog()
        .into_iter()
        .filter(|op| op.writes)
        .map(|op| op.name)
        .collect();
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = stdin.next_line().await {
            // A line that is not JSON is answered with JSON-RPC's parse error (the SDK
            // would drop it unanswered); the session goes on.
            if !line.trim().is_empty()
                && serde_json::from_str::<serde::de::IgnoredAny>(&line).is_err()
            {
                if lines.send(parse_error(&line)).is_err() {
                    break;
                }
                continue;
            }
            if let Some(call) = tool_call(&line) {
                if let Some(error) = invalid_arguments(&call) {
                    if lines.send(error).is_err() {
                        break;
                    }
                    continue;
                }
                if let Some((id, name)) = call_id_and_name(&call) {
                    // An unknown tool is refused without touching the memory.
                    calls.start(id, writes.contains(name)).await;
                }
            } else if line.contains("notifications/cancelled")
                && let Some(id) = ended_call(&line)
            {
                calls.end(&id);
            }
            if to_sdk.write_all(line.as_bytes()).await.is_err()
                || to_sdk.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
        // End of input: the SDK sees its stream close and the service ends.
        let _ = to_sdk.shutdown().await;
    });
    ((sdk_in, sdk_out), writer)
}

/// Serves `memory` as MCP tools over stdin/stdout until the client closes the stream,
/// then flushes every store. Given the error that kept the memory closed instead, serves
/// every tool call that refusal, then returns it.
///
/// # Errors
/// `internal` when the runtime or the transport fails; store errors of the final flush;
/// the refusal it served.
pub fn serve_stdio(memory: Result<Arc<Memory>, ApiError>) -> Result<(), ApiError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            ApiError::new(
                crate::base::Reason::Internal,
                format!("cannot start the runtime: {e}"),
            )
        })?;
    let server = McpServer::over(memory.clone());
    runtime.block_on(async {
        let (transport, writer) = checked_stdio();
        let service = server.serve(transport).await.map_err(|e| match &memory {
            // No client came: the reason the memory is closed is the answer.
            Err(closed) => closed.clone(),
            Ok(_) => ApiError::new(
                crate::base::Reason::Internal,
                format!("MCP handshake failed: {e}"),
            ),
        })?;
        service.waiting().await.map_err(|e| {
            ApiError::new(
                crate::base::Reason::Internal,
                format!("MCP service failed: {e}"),
            )
        })?;
        // Every reply written before the process ends (the writer stops when the SDK and
        // the input checks have both let go of it).
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
        Ok::<(), ApiError>(())
    })?;
    drop(runtime);
    memory?.flush()?;
    Ok(())
}
