//! lb-config.json in and out: reading with stargate's start-up rules (every
//! diagnostic points into the JSON text), writing for `routex build`, and the
//! route file of a configuration for `routex import`.

use crate::diag::Report;
use crate::ir::RouteTable;

/// Checks and lowers an lb-config.json text.
pub fn check_lb_config(source_name: &str, text: &str) -> (Option<RouteTable>, Report) {
    let _ = (source_name, text);
    todo!("config: read")
}

/// Loads a route table from either format: `*.routes` as a route file,
/// anything else as lb-config.json.
pub fn load_table(source_name: &str, text: &str) -> (Option<RouteTable>, Report) {
    if source_name.ends_with(".routes") {
        crate::check::check_route_file(source_name, text)
    } else {
        check_lb_config(source_name, text)
    }
}

/// `routex build`: a route file's text to lb-config.json text.
pub fn build(source_name: &str, text: &str) -> (Option<String>, Report) {
    let _ = (source_name, text);
    todo!("config: build")
}

/// `routex import`: an lb-config.json text to route-file text.
pub fn import(source_name: &str, text: &str) -> (Option<String>, Report) {
    let _ = (source_name, text);
    todo!("config: import")
}
