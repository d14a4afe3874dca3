//! tcpsim-core: tcplab's packet-level TCP congestion-control simulator.
//!
//! A discrete-event simulator in the tradition of ns-2, written for speed: integer nanosecond
//! time, one event queue, indices instead of pointers, packets held by value in the link that
//! carries them. It takes one scenario (JSON; see `scenario`) and returns one result (see `metrics::RunResult`).
//!
//! ```
//! let scenario = r#"{"duration_s": 5, "topology": {"dumbbell": {"bottleneck":
//!     {"rate_mbps": 10, "delay_ms": 5}}}, "flows": [{"variant": "reno", "rtt_ms": 40}]}"#;
//! let result = tcpsim_core::run_json(scenario).unwrap();
//! assert!(result.flows[0].goodput_bps > 5e6);
//! ```

pub mod cc;
pub mod cli;
pub mod engine;
pub mod error;
pub mod histogram;
pub mod loss;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod plan;
pub mod rng;
pub mod scenario;
pub mod schedule;
pub mod sim;
pub mod stop;
pub mod tcp;
pub mod time;
pub mod traffic;

pub use error::{Result, SimError};
pub use metrics::{RunResult, CORE_VERSION};
pub use scenario::Scenario;
pub use stop::StopSignal;

/// Checks a scenario completely (types, ranges, names, routes) without running it.
pub fn validate(s: &Scenario) -> Result<()> {
    sim::Simulation::new(s).map(|_| ())
}

/// Runs a scenario to completion.
pub fn run(s: &Scenario) -> Result<RunResult> {
    sim::Simulation::new(s)?.run()
}

/// Parses and runs a scenario given as JSON text.
pub fn run_json(text: &str) -> Result<RunResult> {
    run(&Scenario::from_json(text)?)
}

/// Runs a scenario given as JSON text until it ends or `stop` is signalled
/// (`SimError::Stopped`). Results are those of `run_json` when it is never signalled.
pub fn run_json_with_stop(text: &str, stop: &StopSignal) -> Result<RunResult> {
    sim::Simulation::new(&Scenario::from_json(text)?)?.run_with_stop(Some(stop))
}

/// Parses and validates a scenario given as JSON text.
pub fn validate_json(text: &str) -> Result<Scenario> {
    let s = Scenario::from_json(text)?;
    validate(&s)?;
    Ok(s)
}
