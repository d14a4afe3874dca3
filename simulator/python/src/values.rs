//! A serde value as Python objects in canonical form, built directly (no JSON text for Python
//! to parse).
//!
//! `normalize(..., canonical=True)` returns the scenario in the form the service hashes and
//! stores: every integral float below 2^53 in magnitude as an int (`1.0` and `1` are the same
//! scenario). Building it here replaces `json.loads` of the core's text and a Python walk over
//! the result, about three quarters of a sweep point's validation.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde_json::Value;

/// The largest magnitude below which every integral float is exactly an integer (2^53).
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// `value` as `json.loads` of its text would give it, except that every finite integral float
/// with |x| < 2^53 is an int (the canonical form).
pub fn canonical_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.is_finite() && f.fract() == 0.0 && f.abs() < EXACT_INT {
                    (f as i64).into_pyobject(py)?.into_any()
                } else {
                    PyFloat::new(py, f).into_any()
                }
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let converted = items
                .iter()
                .map(|v| canonical_python(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, converted)?.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(PyString::new(py, k), canonical_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
