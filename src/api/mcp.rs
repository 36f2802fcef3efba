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
        let service = server.serve(rmcp::transport::stdio()).await.map_err(|e| {
            ApiError::new(
                crate::Reason::Internal,
                format!("MCP handshake failed: {e}"),
            )
        })?;
        service.waiting().await.map_err(|e| {
            ApiError::new(crate::Reason::Internal, format!("MCP service failed: {e}"))
        })?;
        Ok::<(), ApiError>(())
    })?;
    drop(runtime);
    memory.flush()?;
    Ok(())
}
