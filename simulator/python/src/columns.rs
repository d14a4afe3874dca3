//! The result as Python objects built directly from `RunResult`, with no JSON text in between:
//! `run(scenario, columns=True)`.
//!
//! The per-flow table comes as columns and the traces' series as numpy arrays (moved from the
//! core's vectors, not copied per element); everything else (links, fairness, stats, the
//! measured window) as the same small dicts and lists the JSON path gives. One mapping for every
//! number, chosen so that `tcpsim.to_records` gets back the JSON path's result bit for bit:
//!
//! - a float column is float64, NaN exactly where the JSON path has null: an undefined value
//!   (`None`: a ratio over zero, an infinite ssthresh) or a non-finite one, which serde_json
//!   writes as null too;
//! - an integer column is int64 (the core's counters are u64 or u32; one past `i64::MAX` would
//!   be a core bug and raises `tcpsim.InternalError`);
//! - a string column (`name`, `type`, `variant`) is a list of `str` (`None` for a UDP flow's
//!   variant);
//! - a scalar float outside the tables is a Python float, or `None` where the JSON path has null.
//!
//! Keys come in serde's order (the structs' field order, `kind` renamed `type`, absent options
//! left out), which the binding's tests compare with the JSON path's. Every struct is
//! destructured exhaustively, so a field added to the core's result fails to compile here until
//! it has its column or key.

use numpy::{Element, IntoPyArray};
use pyo3::exceptions::PyModuleNotFoundError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyList};
use tcpsim_core::metrics::{Fairness, FlowResult, FlowTrace, LinkResult, LinkTrace, Stats, Traces};
use tcpsim_core::net::wifi::WifiCounters;
use tcpsim_core::RunResult;

/// Imports numpy once, so that without it `columns=True` raises `ModuleNotFoundError` before the
/// run starts (rust-numpy would panic at the first array instead).
pub(crate) fn require_numpy(py: Python<'_>) -> PyResult<()> {
    static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    match NUMPY.get_or_try_init(py, || py.import("numpy").map(Bound::unbind)) {
        Ok(_) => Ok(()),
        Err(cause) => {
            let error =
                PyModuleNotFoundError::new_err("tcpsim.run(..., columns=True) needs numpy, which cannot be imported");
            error.set_cause(py, Some(cause));
            Err(error)
        }
    }
}

/// A field's key: its name, or the name serde renames it to.
macro_rules! key {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident, $key:literal) => {
        $key
    };
}

/// A struct as a dict of its fields (`Scalar`s), in the order listed (serde's); the fields after
/// `if some` are options serde leaves out when absent (`skip_serializing_if`), set only when
/// present.
macro_rules! record {
    ($py:expr, $value:expr, $ty:ident { $($field:ident $(as $key:literal)?),* $(,)? $(; if some $($opt:ident),+ $(,)?)? }) => {{
        let $ty { $($field,)* $($($opt),+)? } = $value;
        let dict = PyDict::new($py);
        $(dict.set_item(pyo3::intern!($py, key!($field $(, $key)?)), Scalar::to_object($field, $py)?)?;)*
        $($(if let Some(v) = $opt {
            dict.set_item(pyo3::intern!($py, stringify!($opt)), Scalar::to_object(v, $py)?)?;
        })+)?
        dict
    }};
}

/// A slice of structs as a dict of columns (`Cell`s), one per field, in the order listed; the
/// fields after `if any` are options serde leaves out when absent, a column (a list, None
/// where absent) only when some row has one.
macro_rules! table {
    ($py:expr, $rows:expr, $ty:ident { $($field:ident $(as $key:literal)?),* $(,)? $(; if any $($opt:ident),+ $(,)?)? }) => {{
        let rows: &[$ty] = $rows;
        // Never called: the pattern only makes the list of fields exhaustive.
        let _every_field = |row: &$ty| {
            let $ty { $($field: _,)* $($($opt: _),+)? } = row;
        };
        let dict = PyDict::new($py);
        $(dict.set_item(pyo3::intern!($py, key!($field $(, $key)?)), Cell::column($py, rows.iter().map(|row| &row.$field))?)?;)*
        $($(if rows.iter().any(|row| row.$opt.is_some()) {
            dict.set_item(pyo3::intern!($py, stringify!($opt)), PyList::new($py, rows.iter().map(|row| row.$opt))?)?;
        })+)?
        dict
    }};
}

/// A value outside the tables, as the JSON path gives it.
trait Scalar {
    fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
}

impl Scalar for f64 {
    fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // serde_json writes a non-finite float as null.
        Ok(if self.is_finite() {
            PyFloat::new(py, *self).into_any()
        } else {
            py.None().into_bound(py)
        })
    }
}

impl Scalar for Option<f64> {
    fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.unwrap_or(f64::NAN).to_object(py)
    }
}

impl Scalar for u64 {
    fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.into_pyobject(py)?.into_any())
    }
}

/// An 802.11 link's MAC counts: a dict, as the JSON path's object.
impl Scalar for WifiCounters {
    fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(record!(
            py,
            self,
            WifiCounters {
                frames_sent,
                mac_retries,
                retry_drops,
                collisions,
            }
        )
        .into_any())
    }
}

impl Scalar for String {
    fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.into_pyobject(py)?.into_any())
    }
}

impl Scalar for &'static str {
    fn to_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.into_pyobject(py)?.into_any())
    }
}

/// The type of a table's column: how a field's values across the rows become one Python object.
trait Cell: Sized {
    fn column<'py, 'a>(py: Python<'py>, cells: impl Iterator<Item = &'a Self>) -> PyResult<Bound<'py, PyAny>>
    where
        Self: 'a;
}

impl Cell for f64 {
    fn column<'py, 'a>(py: Python<'py>, cells: impl Iterator<Item = &'a Self>) -> PyResult<Bound<'py, PyAny>> {
        Ok(floats(py, cells.copied().collect()))
    }
}

impl Cell for Option<f64> {
    fn column<'py, 'a>(py: Python<'py>, cells: impl Iterator<Item = &'a Self>) -> PyResult<Bound<'py, PyAny>> {
        Ok(floats(py, cells.map(|c| c.unwrap_or(f64::NAN)).collect()))
    }
}

impl Cell for u64 {
    fn column<'py, 'a>(py: Python<'py>, cells: impl Iterator<Item = &'a Self>) -> PyResult<Bound<'py, PyAny>> {
        let values = cells.map(|&c| i64::try_from(c)).collect::<Result<Vec<_>, _>>();
        match values {
            Ok(values) => Ok(array(py, values)),
            Err(_) => Err(crate::internal_error(py, "a counter of the result exceeds int64")),
        }
    }
}

impl Cell for String {
    fn column<'py, 'a>(py: Python<'py>, cells: impl Iterator<Item = &'a Self>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, cells.map(String::as_str))?.into_any())
    }
}

impl Cell for &'static str {
    fn column<'py, 'a>(py: Python<'py>, cells: impl Iterator<Item = &'a Self>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, cells.copied())?.into_any())
    }
}

impl Cell for Option<String> {
    fn column<'py, 'a>(py: Python<'py>, cells: impl Iterator<Item = &'a Self>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, cells.map(Option::as_deref))?.into_any())
    }
}

/// A vector as a 1-D numpy array that takes it over (no copy).
fn array<T: Element>(py: Python<'_>, values: Vec<T>) -> Bound<'_, PyAny> {
    values.into_pyarray(py).into_any()
}

/// A float64 array, NaN for what the JSON path writes as null (a non-finite value).
fn floats(py: Python<'_>, mut values: Vec<f64>) -> Bound<'_, PyAny> {
    for v in values.iter_mut().filter(|v| !v.is_finite()) {
        *v = f64::NAN;
    }
    array(py, values)
}

/// The per-flow table: one column per field of `FlowResult`.
fn flow_table<'py>(py: Python<'py>, flows: &[FlowResult]) -> PyResult<Bound<'py, PyDict>> {
    Ok(table!(py, flows, FlowResult {
        name,
        kind as "type",
        variant,
        rtt_propagation_s,
        throughput_bps,
        goodput_bps,
        throughput_pkts_per_rtt,
        goodput_pkts_per_rtt,
        packets_sent,
        packets_received,
        retransmits,
        drops,
        ack_drops,
        loss_rate,
        loss_events,
        loss_event_rate,
        drops_per_loss_event,
        timeouts,
        fast_retransmits,
        fast_recoveries,
        mean_recovery_s,
        mean_rtt_s,
        mean_rto_s,
        downloads,
        download_time_s;
        if any ecn_marks_received,
        cwnd_reductions_ecn,
        dctcp_alpha,
    }))
}

/// The traces with every series a numpy array: `time_s` and a flow's `cwnd`, `ssthresh`,
/// `throughput_bps` and `delay_s` float64 (ssthresh NaN while infinite, delay NaN without an
/// arrival, where the JSON path has null), a link's `queue` int64.
/// A series the scenario did not ask for is absent, as in the JSON path.
fn traces(py: Python<'_>, traces: Traces) -> PyResult<Bound<'_, PyDict>> {
    let Traces { time_s, flows, links } = traces;
    let dict = PyDict::new(py);
    dict.set_item("time_s", floats(py, time_s))?;
    let flow_series = PyList::empty(py);
    for FlowTrace {
        name,
        cwnd,
        ssthresh,
        throughput_bps,
        delay_s,
    } in flows
    {
        let item = PyDict::new(py);
        item.set_item(pyo3::intern!(py, "name"), name)?;
        if let Some(cwnd) = cwnd {
            item.set_item(pyo3::intern!(py, "cwnd"), floats(py, cwnd))?;
        }
        if let Some(ssthresh) = ssthresh {
            item.set_item(
                pyo3::intern!(py, "ssthresh"),
                floats(py, ssthresh.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect()),
            )?;
        }
        if let Some(throughput) = throughput_bps {
            item.set_item(pyo3::intern!(py, "throughput_bps"), floats(py, throughput))?;
        }
        if let Some(delay) = delay_s {
            item.set_item(
                pyo3::intern!(py, "delay_s"),
                floats(py, delay.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect()),
            )?;
        }
        flow_series.append(item)?;
    }
    dict.set_item("flows", flow_series)?;
    let link_series = PyList::empty(py);
    for LinkTrace { name, queue } in links {
        let item = PyDict::new(py);
        item.set_item(pyo3::intern!(py, "name"), name)?;
        item.set_item(
            pyo3::intern!(py, "queue"),
            array(py, queue.into_iter().map(i64::from).collect()),
        )?;
        link_series.append(item)?;
    }
    dict.set_item("links", link_series)?;
    Ok(dict)
}

/// The whole result, keys in the JSON path's order.
pub(crate) fn result(py: Python<'_>, result: RunResult) -> PyResult<Bound<'_, PyDict>> {
    let RunResult {
        core_version,
        seed,
        measured_from_s,
        measured_to_s,
        flows,
        links,
        fairness,
        traces: series,
        stats,
    } = result;
    let dict = PyDict::new(py);
    dict.set_item("core_version", core_version)?;
    dict.set_item("seed", seed)?;
    dict.set_item("measured_from_s", measured_from_s.to_object(py)?)?;
    dict.set_item("measured_to_s", measured_to_s.to_object(py)?)?;
    dict.set_item("flows", flow_table(py, &flows)?)?;
    let link_records = PyList::empty(py);
    for link in &links {
        link_records.append(record!(
            py,
            link,
            LinkResult {
                name,
                from,
                to,
                rate_bps,
                utilization,
                packets,
                drops,
                queue_drops,
                loss_drops,
                mean_queue_pkts,
                mean_queue_delay_s,
                p95_queue_delay_s,
                p99_queue_delay_s;
                if some overflow_drops,
                aqm_drops,
                ecn_marks,
                wifi,
            }
        ))?;
    }
    dict.set_item("links", link_records)?;
    dict.set_item("fairness", record!(py, &fairness, Fairness { jain, uf_percent }))?;
    if let Some(series) = series {
        dict.set_item("traces", traces(py, series)?)?;
    }
    dict.set_item(
        "stats",
        record!(
            py,
            &stats,
            Stats {
                events,
                wall_s,
                events_per_s,
                simulated_s,
                peak_packets
            }
        ),
    )?;
    Ok(dict)
}
