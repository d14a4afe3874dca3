//! `tcpsim._core`: the Python face of tcpsim-core.
//!
//! A thin layer, in the manner of tokenizers' binding crate: the simulator itself lives in the
//! pure Rust crate `tcpsim-core`; this crate only moves scenarios in (a JSON string, or a dict
//! serialised with `json.dumps`), results out (the core's JSON, read with `json.loads`; or, with
//! `columns=True`, Python objects built directly, the per-flow table and the traces as numpy
//! arrays: see `columns`), and errors across, all in one place (`to_py_err`). Every call into
//! the core runs with the GIL released and inside `catch_unwind`, so a long run never blocks
//! other Python threads and a bug in the core raises `tcpsim.InternalError` instead of aborting
//! the interpreter.
//!
//! The exception classes are defined once, in Python (`tcpsim/_errors.py`), and looked up here
//! the first time one is raised.

use std::any::Any;
use std::ffi::OsString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyType};
use tcpsim_core::{SimError, StopSignal};

mod columns;
mod values;

/// Where the exception classes live (pure Python, so they pickle and carry real attributes).
const ERRORS_MODULE: &str = "tcpsim._errors";

/// How a call into the core can fail.
enum Failure {
    /// The core refused the scenario or stopped the run: the caller's problem.
    Sim(SimError),
    /// The core panicked (or could not serialise its result): our problem.
    Internal(String),
}

impl From<SimError> for Failure {
    fn from(e: SimError) -> Self {
        Failure::Sim(e)
    }
}

/// Runs `f` with the GIL released; a panic inside it becomes `Failure::Internal`.
fn call_core<T, F>(py: Python<'_>, f: F) -> Result<T, Failure>
where
    T: Send,
    F: FnOnce() -> Result<T, Failure> + Send,
{
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(Failure::Internal(panic_message(&*payload))))
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

fn internal_message(detail: &str) -> String {
    format!(
        "internal error in the tcpsim core {}, please report it with the scenario that caused it: {detail}",
        tcpsim_core::CORE_VERSION
    )
}

/// `tcpsim.InternalError` for a failure found while building the result's Python objects.
fn internal_error(py: Python<'_>, detail: &str) -> PyErr {
    to_py_err(py, Failure::Internal(detail.to_string()))
}

/// The one place where core errors become Python exceptions:
/// `SimError::Parse` / `Invalid` → `tcpsim.ScenarioError`, `SimError::LimitExceeded` →
/// `tcpsim.LimitExceeded` (a subclass of it), `SimError::Stopped` → `tcpsim.Stopped`, a panic →
/// `tcpsim.InternalError`.
fn to_py_err(py: Python<'_>, failure: Failure) -> PyErr {
    static SCENARIO_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static LIMIT_EXCEEDED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static INTERNAL_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static STOPPED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let made = match failure {
        Failure::Sim(e) => {
            let class = match e {
                SimError::LimitExceeded { .. } => LIMIT_EXCEEDED.import(py, ERRORS_MODULE, "LimitExceeded"),
                SimError::Stopped { .. } => STOPPED.import(py, ERRORS_MODULE, "Stopped"),
                SimError::Parse { .. } | SimError::Invalid { .. } => {
                    SCENARIO_ERROR.import(py, ERRORS_MODULE, "ScenarioError")
                }
            };
            class.and_then(|c| c.call1((e.to_string(), e.path(), e.kind())))
        }
        Failure::Internal(detail) => INTERNAL_ERROR
            .import(py, ERRORS_MODULE, "InternalError")
            .and_then(|c| c.call1((internal_message(&detail),))),
    };
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(lookup_failed) => lookup_failed,
    }
}

/// The scenario as JSON text: a `str` as it is, a `dict` through `json.dumps`.
fn scenario_json(scenario: &Bound<'_, PyAny>) -> PyResult<String> {
    static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = scenario.py();
    if let Ok(text) = scenario.cast::<PyString>() {
        return text.extract();
    }
    if scenario.is_instance_of::<PyDict>() {
        let dumps = DUMPS.get_or_try_init(py, || py.import("json")?.getattr("dumps").map(Bound::unbind))?;
        return dumps.bind(py).call1((scenario,))?.extract();
    }
    Err(PyTypeError::new_err(format!(
        "scenario must be a dict or a JSON string, not {}",
        scenario.get_type().name()?
    )))
}

/// The core's JSON output as Python objects (`json.loads`).
fn json_loads(py: Python<'_>, text: String) -> PyResult<Py<PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let loads = LOADS.get_or_try_init(py, || py.import("json")?.getattr("loads").map(Bound::unbind))?;
    Ok(loads.bind(py).call1((text,))?.unbind())
}

/// Stops a run in progress from another thread: `run(scenario, stop=token)`, then
/// `token.stop()`. The run raises `tcpsim.Stopped` within a few thousand events.
#[pyclass(module = "tcpsim", frozen)]
struct StopToken {
    signal: StopSignal,
}

#[pymethods]
impl StopToken {
    #[new]
    fn new() -> Self {
        StopToken {
            signal: StopSignal::new(),
        }
    }

    /// Asks the runs holding this token to stop. Idempotent; safe from any thread.
    fn stop(&self) {
        self.signal.stop();
    }

    /// Whether `stop()` was called.
    #[getter]
    fn stopped(&self) -> bool {
        self.signal.is_stopped()
    }
}

/// Runs a scenario (a dict or a JSON string) and returns the result as a dict; with `stop`,
/// until that token is stopped. With `columns`, the dict is built directly from the core's result
/// (no JSON text): "flows" as a dict of columns and the traces' series as numpy arrays (see
/// `columns`); without, it is the core's JSON read by `json.loads`, as it always was.
#[pyfunction]
#[pyo3(signature = (scenario, *, stop = None, columns = false))]
fn run(py: Python<'_>, scenario: &Bound<'_, PyAny>, stop: Option<&StopToken>, columns: bool) -> PyResult<Py<PyAny>> {
    let text = scenario_json(scenario)?;
    let signal = stop.map(|token| token.signal.clone());
    let simulate = move || match &signal {
        Some(signal) => tcpsim_core::run_json_with_stop(&text, signal),
        None => tcpsim_core::run_json(&text),
    };
    if columns {
        columns::require_numpy(py)?;
        let result = call_core(py, move || Ok(simulate()?)).map_err(|f| to_py_err(py, f))?;
        // Built with the GIL held; a panic here (a bug) is caught as the core's are.
        return match catch_unwind(AssertUnwindSafe(|| columns::result(py, result))) {
            Ok(built) => Ok(built?.into_any().unbind()),
            Err(payload) => Err(to_py_err(py, Failure::Internal(panic_message(&*payload)))),
        };
    }
    let result = call_core(py, move || {
        serde_json::to_string(&simulate()?).map_err(|e| Failure::Internal(format!("cannot serialise the result: {e}")))
    })
    .map_err(|f| to_py_err(py, f))?;
    json_loads(py, result)
}

/// Checks a scenario (a dict or a JSON string) completely without running it.
#[pyfunction]
fn validate(py: Python<'_>, scenario: &Bound<'_, PyAny>) -> PyResult<()> {
    let text = scenario_json(scenario)?;
    call_core(py, move || Ok(tcpsim_core::validate_json(&text).map(|_| ())?)).map_err(|f| to_py_err(py, f))
}

/// Checks a scenario completely, exactly as `validate` does, and returns it as the core reads
/// it: re-serialised by serde with every default filled in (fields that are absent by default,
/// such as `variant` or a link's `loss`, stay absent). With `canonical`, every integral float
/// below 2^53 is an int and the keys are sorted: the form the service hashes, built without
/// JSON text in between (`values.rs`).
#[pyfunction]
#[pyo3(signature = (scenario, *, canonical = false))]
fn normalize(py: Python<'_>, scenario: &Bound<'_, PyAny>, canonical: bool) -> PyResult<Py<PyAny>> {
    let text = scenario_json(scenario)?;
    if !canonical {
        let normal =
            call_core(py, move || Ok(tcpsim_core::validate_json(&text)?.to_json())).map_err(|f| to_py_err(py, f))?;
        return json_loads(py, normal);
    }
    let value = call_core(py, move || {
        let scenario = tcpsim_core::validate_json(&text)?;
        serde_json::to_value(&scenario).map_err(|e| Failure::Internal(format!("cannot serialise the scenario: {e}")))
    })
    .map_err(|f| to_py_err(py, f))?;
    Ok(values::canonical_python(py, &value)?.unbind())
}

/// The scenario format as JSON Schema, generated from the core's serde types
/// (`tcpsim_core::scenario::json_schema`): what the service's Pydantic mirror is checked against.
#[pyfunction]
fn scenario_schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    json_loads(py, tcpsim_core::scenario::json_schema().to_string())
}

/// Runs the `tcpsim` command line with `argv` (program name first) and returns its exit code.
/// It prints to the process's stdout and stderr itself, exactly as the Rust binary does.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<OsString>) -> i32 {
    py.detach(move || {
        catch_unwind(AssertUnwindSafe(|| tcpsim_core::cli::main_with_args(argv))).unwrap_or_else(|payload| {
            eprintln!("tcpsim: {}", internal_message(&panic_message(&*payload)));
            101
        })
    })
}

/// tcplab's packet-level TCP simulator (compiled core). Use it through the `tcpsim` package.
#[pymodule]
#[pyo3(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<StopToken>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add("__version__", tcpsim_core::CORE_VERSION)?;
    let variants = PyDict::new(m.py());
    for (name, about) in tcpsim_core::cc::VARIANTS {
        variants.set_item(name, about)?;
    }
    m.add("VARIANTS", variants)?;
    m.add("SACK_VARIANTS", tcpsim_core::cc::sack_variants().collect::<Vec<_>>())?;
    let profiles = PyDict::new(m.py());
    for profile in tcpsim_core::scenario::TcpProfile::ALL {
        profiles.set_item(profile.name(), json_loads(m.py(), profile.settings().to_string())?)?;
    }
    m.add("TCP_PROFILES", profiles)?;
    Ok(())
}
