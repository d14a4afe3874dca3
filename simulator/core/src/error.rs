//! The one error type of the core. Every failure carries a JSON path into the scenario where
//! one applies, so a user (or the service's 422) can say exactly which field is wrong.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    /// The scenario is not valid JSON or does not have the scenario's shape.
    #[error("invalid scenario at {path}: {message}")]
    Parse { path: String, message: String },
    /// The scenario parsed but a value is out of range or inconsistent with another.
    #[error("invalid scenario at {path}: {message}")]
    Invalid { path: String, message: String },
    /// The run passed one of its limits (events or wall time) and was stopped.
    #[error("run stopped: {message}")]
    LimitExceeded { message: String },
    /// The caller stopped the run through its `StopSignal` (a cancel, a worker shutting down).
    #[error("run stopped by request: {message}")]
    Stopped { message: String },
}

impl SimError {
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        SimError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The JSON path of the offending field, when the error is about the input.
    pub fn path(&self) -> Option<&str> {
        match self {
            SimError::Parse { path, .. } | SimError::Invalid { path, .. } => Some(path),
            SimError::LimitExceeded { .. } | SimError::Stopped { .. } => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            SimError::Parse { .. } => "parse",
            SimError::Invalid { .. } => "invalid",
            SimError::LimitExceeded { .. } => "limit_exceeded",
            SimError::Stopped { .. } => "stopped",
        }
    }
}

pub type Result<T> = std::result::Result<T, SimError>;
