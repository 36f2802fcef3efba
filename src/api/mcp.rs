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
                crate::Reason::UnknownTool,
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
                    crate::Reason::Internal,
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

/// The invalid-params error (-32602) of a `tools/call` whose `arguments` is not an object,
/// as a JSON-RPC response line; `None` for any other message. The SDK would answer such a
/// call -32601 (method not found), which misleads a client about what went wrong.
fn invalid_arguments(line: &str) -> Option<String> {
    // Only a tool call is parsed here; the SDK parses every message anyway.
    if !line.contains("tools/call") {
        return None;
    }
    let message: Value = serde_json::from_str(line).ok()?;
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let arguments = message.get("params")?.get("arguments")?;
    if arguments.is_object() || arguments.is_null() {
        return None;
    }
    Some(
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": message.get("id").cloned().unwrap_or(Value::Null),
            "error": {
                "code": -32602,
                "message": "invalid params: `arguments` must be a JSON object of the tool's fields",
            },
        })
        .to_string(),
    )
}

/// stdin/stdout for the SDK, with each incoming line checked first ([`invalid_arguments`]):
/// the SDK reads and writes through in-process pipes, and one task writes every outgoing
/// line (the SDK's and the checks') to stdout, so lines never interleave.
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
    tokio::spawn(async move {
        let mut from_sdk = BufReader::new(from_sdk).lines();
        while let Ok(Some(line)) = from_sdk.next_line().await {
            if replies.send(line).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = stdin.next_line().await {
            if let Some(error) = invalid_arguments(&line) {
                if lines.send(error).is_err() {
                    break;
                }
                continue;
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
/// then flushes every store.
///
/// # Errors
/// `internal` when the runtime or the transport fails; store errors of the final flush.
pub fn serve_stdio(memory: Arc<Memory>) -> Result<(), ApiError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            ApiError::new(
                crate::Reason::Internal,
                format!("cannot start the runtime: {e}"),
            )
        })?;
    let server = McpServer::new(memory.clone());
    runtime.block_on(async {
        let (transport, writer) = checked_stdio();
        let service = server.serve(transport).await.map_err(|e| {
            ApiError::new(
                crate::Reason::Internal,
                format!("MCP handshake failed: {e}"),
            )
        })?;
        service.waiting().await.map_err(|e| {
            ApiError::new(crate::Reason::Internal, format!("MCP service failed: {e}"))
        })?;
        // Every reply written before the process ends (the writer stops when the SDK and
        // the input checks have both let go of it).
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
        Ok::<(), ApiError>(())
    })?;
    drop(runtime);
    memory.flush()?;
    Ok(())
}
