//! `csp lsp`: a language server over stdio (docs/lsp.md). One thread reads
//! requests in order and answers each from the documents' current text,
//! sharing the compiler's front end: diagnostics are `csp check`'s.

mod actions;
mod complete;
mod diagnostics;
mod format;
mod hover;
mod inlay;
mod modules;
mod navigate;
mod project;
mod reference;
pub(crate) mod resolve;
mod signature;
mod text;
mod tokens;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use text::{Encoding, Lines};

/// An open document.
pub struct Doc {
    pub uri: Uri,
    pub text: String,
    /// Its file, for relative imports (None for an unsaved buffer).
    pub path: Option<PathBuf>,
}

impl Doc {
    /// What the checker calls it: the path, so imports resolve next to it.
    fn name(&self) -> String {
        self.path.as_ref().map_or_else(|| self.uri.as_str().to_string(), |p| p.to_string_lossy().into_owned())
    }
}

struct Server {
    conn: Connection,
    docs: HashMap<String, Doc>,
    enc: Encoding,
    /// The workspace's root directory, where rename looks for other files.
    root: Option<PathBuf>,
}

type Answer = Result<Value, (ErrorCode, String)>;

/// Serves on stdin/stdout until the client says `exit`; the process's exit code.
pub fn run() -> i32 {
    let (conn, io) = Connection::stdio();
    let code = match serve(conn) {
        Ok(()) => 0,
        Err(e) => {
            crate::err_println!("csp lsp: {e}");
            1
        }
    };
    drop(io.join());
    code
}

fn serve(conn: Connection) -> Result<(), Box<dyn std::error::Error>> {
    let (id, params) = conn.initialize_start()?;
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let offered = params.capabilities.general.and_then(|g| g.position_encodings).unwrap_or_default();
    let enc = if offered.contains(&PositionEncodingKind::UTF8) { Encoding::Utf8 } else { Encoding::Utf16 };
    #[allow(deprecated)] // `root_uri`: older clients send only it
    let root = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .map(|f| &f.uri)
        .or(params.root_uri.as_ref())
        .and_then(text::uri_path);
    let result = InitializeResult { capabilities: capabilities(enc), server_info: Some(server_info()) };
    conn.initialize_finish(id, serde_json::to_value(result)?)?;
    let mut server = Server { conn, docs: HashMap::new(), enc, root };
    while let Ok(msg) = server.conn.receiver.recv() {
        match msg {
            Message::Request(r) => {
                if server.conn.handle_shutdown(&r)? {
                    return Ok(());
                }
                let id = r.id.clone();
                let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.request(r)))
                    .unwrap_or_else(|_| Err((ErrorCode::InternalError, "internal error".into())));
                let response = match answer {
                    Ok(v) => Response::new_ok(id, v),
                    Err((code, message)) => Response::new_err(id, code as i32, message),
                };
                server.conn.sender.send(Message::Response(response))?;
            }
            Message::Notification(n) => server.notification(n)?,
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn server_info() -> ServerInfo {
    ServerInfo { name: "csp".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }
}

fn capabilities(enc: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match enc {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        definition_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into()]),
            ..Default::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".into(), ",".into()]),
            retrigger_characters: None,
            work_done_progress_options: Default::default(),
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: tokens::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: Default::default(),
            },
        )),
        inlay_hint_provider: Some(OneOf::Left(true)),
        ..Default::default()
    }
}

fn params<P: serde::de::DeserializeOwned>(v: Value) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(v).map_err(|e| (ErrorCode::InvalidParams, format!("invalid params: {e}")))
}

fn json<T: serde::Serialize>(v: T) -> Answer {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

impl Server {
    /// The open document and the byte offset of a position in it.
    fn at(&self, p: &TextDocumentPositionParams) -> Result<(&Doc, usize), (ErrorCode, String)> {
        let doc = self.doc(&p.text_document.uri)?;
        Ok((doc, Lines::new(&doc.text, self.enc).offset(p.position)))
    }

    fn doc(&self, uri: &Uri) -> Result<&Doc, (ErrorCode, String)> {
        self.docs.get(uri.as_str()).ok_or_else(|| (ErrorCode::InvalidParams, format!("{} is not open", uri.as_str())))
    }

    fn request(&mut self, r: Request) -> Answer {
        let enc = self.enc;
        match r.method.as_str() {
            req::GotoDefinition::METHOD => {
                let p: GotoDefinitionParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position_params)?;
                json(navigate::definition(doc, at, enc).map(GotoDefinitionResponse::Scalar))
            }
            req::HoverRequest::METHOD => {
                let p: HoverParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position_params)?;
                json(hover::hover(doc, at, enc))
            }
            req::Completion::METHOD => {
                let p: CompletionParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position)?;
                json(CompletionResponse::Array(complete::complete(doc, at)))
            }
            req::DocumentSymbolRequest::METHOD => {
                let p: DocumentSymbolParams = params(r.params)?;
                json(DocumentSymbolResponse::Nested(navigate::symbols(self.doc(&p.text_document.uri)?, enc)))
            }
            req::Rename::METHOD => {
                let p: RenameParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position)?;
                let project = project::Project { root: self.root.as_deref(), docs: &self.docs };
                json(navigate::rename(doc, at, &p.new_name, enc, &project).map_err(|e| (ErrorCode::InvalidParams, e))?)
            }
            req::References::METHOD => {
                let p: ReferenceParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position)?;
                json(navigate::references(doc, at, p.context.include_declaration, enc))
            }
            req::Formatting::METHOD => {
                let p: DocumentFormattingParams = params(r.params)?;
                json(format::format(&self.doc(&p.text_document.uri)?.text, enc))
            }
            req::SignatureHelpRequest::METHOD => {
                let p: SignatureHelpParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position_params)?;
                json(signature::help(doc, at))
            }
            req::CodeActionRequest::METHOD => {
                let p: CodeActionParams = params(r.params)?;
                let doc = self.doc(&p.text_document.uri)?;
                let lines = Lines::new(&doc.text, enc);
                let (from, to) = (lines.offset(p.range.start), lines.offset(p.range.end));
                json(actions::actions(doc, from, to, enc))
            }
            req::SemanticTokensFullRequest::METHOD => {
                let p: SemanticTokensParams = params(r.params)?;
                let data = tokens::tokens(self.doc(&p.text_document.uri)?, enc);
                json(SemanticTokensResult::Tokens(SemanticTokens { result_id: None, data }))
            }
            req::InlayHintRequest::METHOD => {
                let p: InlayHintParams = params(r.params)?;
                let doc = self.doc(&p.text_document.uri)?;
                let lines = Lines::new(&doc.text, enc);
                json(inlay::hints(doc, lines.offset(p.range.start), lines.offset(p.range.end), enc))
            }
            m => Err((ErrorCode::MethodNotFound, format!("csp lsp does not handle {m}"))),
        }
    }

    fn notification(&mut self, n: Notification) -> Result<(), Box<dyn std::error::Error>> {
        match n.method.as_str() {
            note::DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else { return Ok(()) };
                let uri = p.text_document.uri;
                let path = text::uri_path(&uri);
                self.docs.insert(uri.as_str().to_string(), Doc { uri: uri.clone(), text: p.text_document.text, path });
                self.publish(&uri)?;
            }
            note::DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else { return Ok(()) };
                let uri = p.text_document.uri;
                if let Some(doc) = self.docs.get_mut(uri.as_str()) {
                    for change in p.content_changes {
                        text::apply(&mut doc.text, change, self.enc);
                    }
                }
                self.publish(&uri)?;
            }
            note::DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else { return Ok(()) };
                if self.docs.remove(p.text_document.uri.as_str()).is_some() {
                    self.send_diagnostics(p.text_document.uri, Vec::new())?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn publish(&self, uri: &Uri) -> Result<(), Box<dyn std::error::Error>> {
        let Some(doc) = self.docs.get(uri.as_str()) else { return Ok(()) };
        let name = doc.name();
        let diags = diagnostics::check(&name, &doc.text);
        self.send_diagnostics(uri.clone(), diagnostics::to_lsp(&name, &doc.text, &diags, self.enc))
    }

    fn send_diagnostics(&self, uri: Uri, diagnostics: Vec<Diagnostic>) -> Result<(), Box<dyn std::error::Error>> {
        let p = PublishDiagnosticsParams { uri, diagnostics, version: None };
        let n = Notification::new(note::PublishDiagnostics::METHOD.to_string(), p);
        self.conn.sender.send(Message::Notification(n))?;
        Ok(())
    }
}
