"""Named link traces (issue 18): Mahimahi traces uploaded once and named, or built in, that a
scenario's link follows by name (`"trace": {"name": ...}`). The service never reads a path a
user gives: a trace's content lives in PostgreSQL, and the worker writes it to a
content-addressed file just before the core runs (docs/traces.md).

- `format`: the strict reading of a trace's text, its canonical form and sha256;
- `builtin`: the lab's traces shipped with the code (services/presets/data/traces);
- `service`: upload, list, show, delete, quotas; the name -> hash resolver of a scenario;
- `files`: the worker's side, content hash -> a file for the core.
"""
