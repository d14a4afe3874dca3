//! The `tcpsim` command line: run or validate scenario files. Shared by the Rust binary and
//! the Python package's console script, so both behave the same.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "tcpsim", version = crate::CORE_VERSION, about = "tcplab's packet-level TCP simulator")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario and print the result as JSON.
    Run {
        /// Scenario file (JSON), or - for standard input.
        scenario: PathBuf,
        /// Pretty-print the result.
        #[arg(long)]
        pretty: bool,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Check a scenario without running it.
    Validate {
        /// Scenario file (JSON), or - for standard input.
        scenario: PathBuf,
    },
    /// List the congestion-control variants.
    Variants,
    /// Print the scenario format as JSON Schema (every field, enum and default).
    Schema,
}

fn read(path: &PathBuf) -> Result<String, String> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }
}

/// Writes one line to stdout. A closed pipe (`tcpsim run … | head`) ends the output quietly
/// instead of panicking as `println!` would.
fn print_line(line: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write the output: {e}")),
        _ => Ok(()),
    }
}

/// Runs the command line with `args` (program name first); returns the exit code.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let outcome = match cli.command {
        Command::Run { scenario, pretty, seed } => read(&scenario).and_then(|text| {
            let mut s = crate::Scenario::from_json(&text).map_err(|e| e.to_string())?;
            if let Some(seed) = seed {
                s.seed = seed;
            }
            let result = crate::run(&s).map_err(|e| e.to_string())?;
            let json = if pretty {
                serde_json::to_string_pretty(&result)
            } else {
                serde_json::to_string(&result)
            };
            print_line(&json.map_err(|e| e.to_string())?)
        }),
        Command::Validate { scenario } => read(&scenario).and_then(|text| {
            let s = crate::validate_json(&text).map_err(|e| e.to_string())?;
            let flows: u64 = s.flows.iter().map(|f| f.count as u64).sum();
            print_line(&format!("ok: {} flow(s), {} s simulated", flows, s.duration_s))
        }),
        Command::Variants => crate::cc::VARIANTS
            .iter()
            .try_for_each(|(name, about)| print_line(&format!("{name:20} {about}"))),
        Command::Schema => serde_json::to_string_pretty(&crate::scenario::json_schema())
            .map_err(|e| e.to_string())
            .and_then(|text| print_line(&text)),
    };
    match outcome {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("tcpsim: {message}");
            1
        }
    }
}
