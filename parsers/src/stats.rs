//! Rows of the `parse_stats` table: what a parse counted, and how bad it is.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Plain counts (events, pages).
    Info,
    /// The capture is missing events (the kernel dropped them, or we could
    /// not decode them); what is there is right.
    DataLoss,
    /// The input is damaged; some of it could not be read.
    Error,
    /// Everything was read, but some of it skews what is counted (an event type
    /// recorded in two trace buffers appears twice).
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::DataLoss => "data_loss",
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub name: String,
    pub cpu: Option<i32>,
    pub severity: Severity,
    pub count: u64,
    pub description: String,
}

impl Stat {
    pub fn new(name: &str, cpu: Option<i32>, severity: Severity, count: u64, description: &str) -> Stat {
        Stat { name: name.to_string(), cpu, severity, count, description: description.to_string() }
    }
}
