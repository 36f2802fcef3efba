//! Messages for refused external input (plan files, import files, request bodies): they
//! name the origin, the line and column, and what is wrong in hypermem's words. Syntax
//! errors are described, not quoted from the parser; a data error keeps the field it
//! names (`missing field `statement``), without the parser's location suffix.

/// What is wrong with a JSON document that `serde_json` refused, as one sentence naming
/// `origin` (a file, or a file and line) and the position.
pub fn json_error(origin: &str, e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = if e.line() > 0 {
        format!(" (line {}, column {})", e.line(), e.column())
    } else {
        String::new()
    };
    let what = match e.classify() {
        Category::Io => "it could not be read".to_owned(),
        Category::Syntax => "it is not valid JSON".to_owned(),
        Category::Eof => "it ends before the JSON value is complete".to_owned(),
        Category::Data => {
            let text = e.to_string();
            let text = match text.rfind(" at line ") {
                Some(i) => text[..i].to_owned(),
                None => text,
            };
            format!("a field is wrong: {text}")
        }
    };
    format!("{origin}{at}: {what}")
}
