//! Reporting: the result files and the printed table, the plots, and the
//! list of files a run writes.

pub mod output;
pub mod plot;
pub mod results;
pub mod timeline_plot;
