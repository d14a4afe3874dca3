"""The SDK: `Client`, one method per thing tcplab does.

    from tcplab_client import Client
    lab = Client()                      # TCPLAB_URL / TCPLAB_TOKEN / `tcplab login`'s config
    run = lab.submit_run(preset="paper000-fig2a", overrides={"duration_s": 20})
    lab.wait_run(run["id"])
    frame = lab.result_frame(run["id"])

Bodies come back as the server sends them (dicts and lists of the JSON), tables also as CSV
text, Parquet bytes or pandas DataFrames. A failed request raises a `TcplabError` subclass
(`tcplab_client.errors`) with the server's message.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

import httpx

from tcplab_client import __version__
from tcplab_client.config import load_config, resolve
from tcplab_client.errors import NotFound, TcplabError, Unavailable, WaitTimeout, error_for

if TYPE_CHECKING:
    import pandas as pd

TableFormat = Literal["json", "csv", "parquet", "frame"]
RUN_FINAL = ("succeeded", "failed", "cancelled")
SWEEP_FINAL = ("done", "cancelled")


class Client:
    """A tcplab server.

    `base_url` and `token` override `TCPLAB_URL`, `TCPLAB_TOKEN` and the config file written by
    `tcplab login` (`tcplab_client.config`). With a token, every request carries
    `Authorization: Bearer <token>`. `timeout` is per request (seconds); `transport` is
    handed to httpx (tests, proxies)."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        config_path: Path | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url, self.token = resolve(base_url, token, load_config(config_path))
        headers = {"User-Agent": f"tcplab-client/{__version__}", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}{', token=…' if self.token else ''})"

    # ---- plumbing -------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """One request; a 4xx/5xx or an unreachable server raises a `TcplabError`. `content`
        is a raw body (a trace upload), sent instead of `json`."""
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = self._http.request(
                method, path, json=json, params=clean or None, content=content, headers=headers
            )
        except httpx.TimeoutException as exc:
            raise Unavailable(
                f"{self.base_url} did not answer {method} {path} in time ({type(exc).__name__})"
            ) from None
        except httpx.TransportError as exc:
            reason = str(exc) or type(exc).__name__
            raise Unavailable(f"cannot reach tcplab at {self.base_url}: {reason}") from None
        if response.is_error:
            raise error_for(response)
        return response

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            kind = response.headers.get("content-type", "no content type")
            raise TcplabError(
                f"{method} {path} answered {response.status_code} with {kind}, not JSON: is "
                f"{self.base_url} a tcplab server?",
                status=response.status_code,
                body=response.text[:500],
            ) from None

    def _table(self, path: str, params: Mapping[str, Any], format: TableFormat) -> Any:
        """A tabular endpoint (`?format=`): json → the body (rows under "rows"), csv → text,
        parquet → bytes, frame → a pandas DataFrame (read from the Parquet)."""
        if format not in ("json", "csv", "parquet", "frame"):
            raise ValueError(f"format must be json, csv, parquet or frame, not {format!r}")
        wire = "parquet" if format == "frame" else format
        response = self.request("GET", path, params={**params, "format": wire})
        if format == "json":
            return response.json()
        if format == "csv":
            return response.text
        if format == "parquet":
            return response.content
        return parquet_frame(response.content)

    # ---- service --------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """`/healthz`: the server's version and its core's."""
        return self._json("GET", "/healthz")

    def ready(self) -> dict[str, Any]:
        """`/readyz`: database and broker reachable (503 → `Unavailable`)."""
        return self._json("GET", "/readyz")

    # ---- runs -----------------------------------------------------------------------------

    def submit_run(
        self,
        scenario: Mapping[str, Any] | None = None,
        *,
        preset: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        shared: bool = False,
    ) -> dict[str, Any]:
        """Submits a scenario, or a preset with overrides (`{"duration_s": 20,
        "flows[*].loss.m": 4}`); `shared` makes it visible to the whole lab. The run as
        stored: `id`, `status`, `cached` (answered from an identical earlier run), …"""
        body: dict[str, Any] = {"shared": True} if shared else {}
        if scenario is not None:
            body["scenario"] = dict(scenario)
        if preset is not None:
            body["preset"] = preset
        if overrides:
            body["overrides"] = dict(overrides)
        return self._json("POST", "/v1/runs", json=body)

    def run(self, run_id: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/runs/{run_id}")

    def runs(
        self,
        *,
        limit: int = 20,
        offset: int = 0,
        status: str | None = None,
        preset: str | None = None,
        variant: str | None = None,
    ) -> list[dict[str, Any]]:
        """Recent runs, newest first."""
        params = {"limit": limit, "offset": offset, "status": status, "preset": preset, "variant": variant}
        return self._json("GET", "/v1/runs", params=params)["items"]

    def cancel_run(self, run_id: str) -> dict[str, Any]:
        return self._json("POST", f"/v1/runs/{run_id}/cancel")

    def share_run(self, run_id: str, shared: bool = True) -> dict[str, Any]:
        """Shares a run with the lab (or makes it private with `shared=False`)."""
        return self._json("PATCH", f"/v1/runs/{run_id}", json={"shared": shared})

    def wait_run(
        self,
        run_id: str,
        *,
        progress: bool = True,
        timeout: float | None = None,
        poll: float = 0.25,
        max_poll: float = 3.0,
    ) -> dict[str, Any]:
        """Polls the run (every `poll` s, growing by half up to `max_poll`) until it has
        succeeded, failed or been cancelled, and returns it; a Rich spinner on stderr when
        `progress`. `WaitTimeout` after `timeout` seconds. A server that is briefly
        unavailable (a restart) is waited for too."""
        from tcplab_client.progress import run_spinner

        with run_spinner(run_id, enabled=progress) as show:
            return self._wait(lambda: self.run(run_id), RUN_FINAL, show, timeout, poll, max_poll, f"run {run_id}")

    def result(self, run_id: str, *, traces: bool = False) -> dict[str, Any]:
        """The result of a succeeded run: the summary and `flows` (one dict per flow);
        `traces` on request. `Conflict` while the run has not succeeded."""
        return self._json("GET", f"/v1/runs/{run_id}/result", params={"traces": "true" if traces else None})

    def result_frame(self, run_id: str) -> pd.DataFrame:
        """The flows of a succeeded run as a DataFrame, one row per flow."""
        return rows_frame(self.result(run_id)["flows"])

    # ---- sweeps ---------------------------------------------------------------------------

    def submit_sweep(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Creates a sweep (`docs/sweeps.md`): `{"preset" | "scenario", "overrides", "axes",
        "replications", "seed", "combine", "stopping", "name"}`. `created` says how many runs
        were added, answered from the cache and enqueued."""
        return self._json("POST", "/v1/sweeps", json=dict(spec))

    def sweep(self, sweep_id: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/sweeps/{sweep_id}")

    def sweeps(self, *, limit: int = 20, offset: int = 0, preset: str | None = None) -> list[dict[str, Any]]:
        """Recent sweeps with their progress, newest first."""
        return self._json("GET", "/v1/sweeps", params={"limit": limit, "offset": offset, "preset": preset})["items"]

    def sweep_points(self, sweep_id: str) -> list[dict[str, Any]]:
        return self._json("GET", f"/v1/sweeps/{sweep_id}/points")["items"]

    def sweep_runs(self, sweep_id: str) -> list[dict[str, Any]]:
        return self._json("GET", f"/v1/sweeps/{sweep_id}/runs")

    def wait_sweep(
        self,
        sweep_id: str,
        *,
        progress: bool = True,
        timeout: float | None = None,
        poll: float = 0.25,
        max_poll: float = 3.0,
    ) -> dict[str, Any]:
        """Polls until the sweep is done (nothing queued or running) or cancelled, with a Rich
        progress bar of its runs on stderr when `progress`; returns the sweep."""
        from tcplab_client.progress import sweep_bar

        with sweep_bar(sweep_id, enabled=progress) as show:
            return self._wait(
                lambda: self.sweep(sweep_id), SWEEP_FINAL, show, timeout, poll, max_poll, f"sweep {sweep_id}"
            )

    def sweep_summary(
        self,
        sweep_id: str,
        *,
        metric: str | Iterable[str] | None = None,
        flow: str | None = None,
        format: TableFormat = "json",
    ) -> Any:
        """Per point, flow group and metric over the succeeded replications: mean, std, 95 %
        interval. `format`: json (the body, rows under "rows"), csv (text), parquet (bytes),
        frame (a DataFrame)."""
        metrics = [metric] if isinstance(metric, str) else list(metric) if metric is not None else None
        return self._table(f"/v1/sweeps/{sweep_id}/summary", {"metric": metrics, "flow": flow}, format)

    def extend_sweep(
        self,
        sweep_id: str,
        *,
        replications: int | None = None,
        axes: list[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """More replications (the new total per point) and/or more values on existing axes
        (`[{"path": ..., "values": [...]}]`); only the new runs are simulated."""
        body: dict[str, Any] = {}
        if replications is not None:
            body["replications"] = replications
        if axes is not None:
            body["axes"] = [dict(a) for a in axes]
        return self._json("POST", f"/v1/sweeps/{sweep_id}/extend", json=body)

    def share_sweep(self, sweep_id: str, shared: bool = True) -> dict[str, Any]:
        """Shares a sweep and its runs with the lab (or makes them private)."""
        return self._json("PATCH", f"/v1/sweeps/{sweep_id}", json={"shared": shared})

    def cancel_sweep(self, sweep_id: str) -> dict[str, Any]:
        return self._json("POST", f"/v1/sweeps/{sweep_id}/cancel")

    # ---- comparisons ----------------------------------------------------------------------

    def compare_models(
        self,
        *,
        run_id: str | None = None,
        sweep_id: str | None = None,
        models: Iterable[str] | None = None,
        m_from: str | None = None,
        format: TableFormat = "json",
    ) -> Any:
        """Model vs simulation for a run or every point of a sweep (`docs/comparisons.md`)."""
        params = {"run_id": run_id, "sweep_id": sweep_id, "models": list(models) if models else None, "m_from": m_from}
        return self._table("/v1/comparisons/models", params, format)

    def compare_ratios(
        self,
        *,
        run_id: str | None = None,
        sweep_id: str | None = None,
        metric: str | None = None,
        flow_a: str | None = None,
        flow_b: str | None = None,
        axis: str | None = None,
        baseline: Any = None,
        other: Any = None,
        flow: str | None = None,
        along: str | None = None,
        format: TableFormat = "json",
    ) -> Any:
        """Variant vs variant, paired by replication: two flow groups (`flow_a`, `flow_b`) or
        two values of one axis (`axis`, `baseline`, `other`)."""
        params = {
            "run_id": run_id,
            "sweep_id": sweep_id,
            "metric": metric,
            "flow_a": flow_a,
            "flow_b": flow_b,
            "axis": axis,
            "baseline": None if baseline is None else _query_value(baseline),
            "other": None if other is None else _query_value(other),
            "flow": flow,
            "along": along,
        }
        return self._table("/v1/comparisons/ratios", params, format)

    def compare_paper(self, sweep_id: str, *, format: TableFormat = "json") -> Any:
        """A sweep of a paper preset beside the paper's published numbers."""
        return self._table("/v1/comparisons/paper", {"sweep_id": sweep_id}, format)

    # ---- models and presets ---------------------------------------------------------------

    def models(self) -> list[dict[str, Any]]:
        """Every closed-form model with its parameters, units and ranges."""
        return self._json("GET", "/v1/models")

    def model_info(self, name: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/models/{name}")

    def model(self, name: str, *, mode: str | None = None, **params: Any) -> dict[str, Any]:
        """Evaluates a model: `lab.model("newreno-sbs", p=0.001, m=4, rtt_s=0.07)`. Numbers or
        lists (paired element by element; `mode="grid"` for the outer product). Returns
        `inputs`, `outputs`, `shape`, `warnings`."""
        body = {k: v for k, v in params.items() if v is not None}
        if mode is not None:
            body["mode"] = mode
        return self._json("POST", f"/v1/models/{name}/evaluate", json=body)

    def crossover(self, *, p: Any, rtt_s: Any, rto_s: Any, m_star: Any = None) -> dict[str, Any]:
        """Paper 000's crossover m_t of Slow-but-Steady and Impatient per p (`docs/models.md`):
        `p` a number, a list or a range `{"start", "stop", "num", "scale": "log"}`; R, RTO and m*
        broadcast with it. Returns per p `m_t`, `m_t_int`, `status`, `w_sbs_at_m_t`, `w_imp`."""
        body = {"p": p, "rtt_s": rtt_s, "rto_s": rto_s, "m_star": m_star}
        return self._json("POST", "/v1/models/newreno/crossover", json={k: v for k, v in body.items() if v is not None})

    def regions(self, *, p: Any, m: Any, rtt_s: float, rto_s: float, m_star: float | None = None) -> dict[str, Any]:
        """Paper 000's Fig. 4 over p × m (numbers, lists or ranges): `labels[i][j]` is the region at
        p[i], m[j] (equality, sbs_superior, imp_superior, outside_model), with `counts`, the
        `m_t` curve and the IMP bound per p."""
        one = lambda v: [v] if isinstance(v, int | float) else v  # noqa: E731  (a map of one row or column)
        body = {"p": one(p), "m": one(m), "rtt_s": rtt_s, "rto_s": rto_s, "m_star": m_star}
        return self._json("POST", "/v1/models/newreno/regions", json={k: v for k, v in body.items() if v is not None})

    # ---- reproductions --------------------------------------------------------------------

    def reproductions(self) -> list[dict[str, Any]]:
        """The papers with a reproduction, their experiments and your newest reproduction's
        state (`reproduction`: batch, status, runs, runs_done)."""
        return self._json("GET", "/v1/reproductions")

    def reproduce(
        self,
        paper: str,
        *,
        overrides: Mapping[str, Any] | None = None,
        experiments: Iterable[str] | None = None,
        shared: bool = False,
    ) -> dict[str, Any]:
        """Starts a reproduction of `paper` ("000", "002", …): one sweep of yours per experiment
        (`docs/reproductions.md`). Returns `batch`, `created` and `sweeps` (experiment, sweep_id)."""
        body: dict[str, Any] = {"shared": True} if shared else {}
        if overrides:
            body["overrides"] = dict(overrides)
        if experiments is not None:
            body["experiments"] = list(experiments)
        return self._json("POST", f"/v1/reproductions/{paper}", json=body)

    def reproduction(self, paper: str, *, format: TableFormat = "json") -> Any:
        """The paper's conclusions judged against your newest finished sweeps: json → the body
        (`rows`, `verdicts`, `status`, `reproduction`, `tables`, `sources`); csv, parquet, frame."""
        return self._table(f"/v1/reproductions/{paper}", {}, format)

    def reproduction_table(self, paper: str, key: str, *, format: TableFormat = "json") -> Any:
        """One table of ours beside the paper's (`tables[].key` of `reproduction()`)."""
        return self._table(f"/v1/reproductions/{paper}/tables/{key}", {}, format)

    def reproduction_status(self, paper: str) -> dict[str, Any]:
        """Your newest reproduction of `paper` without judging it: `{"status": "none"}` before
        any, else batch, status (running or done), runs, runs_done and its sweeps."""
        wanted = paper.removeprefix("paper")
        for item in self.reproductions():
            if item["paper"] == wanted:
                return item["reproduction"]
        raise NotFound(f"paper {paper!r} has no reproduction (tcplab reproductions lists them)", status=404)

    def wait_reproduction(
        self,
        paper: str,
        *,
        progress: bool = True,
        timeout: float | None = None,
        poll: float = 0.5,
        max_poll: float = 5.0,
    ) -> dict[str, Any]:
        """Polls your newest reproduction of `paper` until every sweep of it is done or
        cancelled (a progress bar of its runs on stderr when `progress`); returns its state."""
        from tcplab_client.progress import reproduction_bar

        def fetch() -> dict[str, Any]:
            state = self.reproduction_status(paper)
            if state["status"] == "none":
                raise TcplabError(f"paper {paper} has not been reproduced: start it with reproduce()")
            return state

        with reproduction_bar(paper, enabled=progress) as show:
            return self._wait(fetch, ("done",), show, timeout, poll, max_poll, f"the reproduction of paper {paper}")

    def presets(self) -> list[dict[str, Any]]:
        return self._json("GET", "/v1/presets")

    def preset(self, name: str) -> dict[str, Any]:
        """One preset with its full scenario."""
        return self._json("GET", f"/v1/presets/{name}")

    # ---- link traces ------------------------------------------------------------------------

    def traces(self) -> list[dict[str, Any]]:
        """The built-in traces, then yours (`docs/traces.md`): name, lines, span, mean rate, hash."""
        return self._json("GET", "/v1/traces")

    def trace(self, name: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/traces/{name}")

    def trace_content(self, name: str) -> str:
        """The trace's text, one delivery opportunity (a millisecond) per line."""
        return self.request("GET", f"/v1/traces/{name}/content").text

    def upload_trace(self, name: str, trace: bytes | str | Path) -> dict[str, Any]:
        """Stores a Mahimahi trace (its bytes, its text, or a file) as your trace `name`,
        replacing yours of that name; a scenario's link then names it: `"trace": {"name": ...}`.
        A bad file is `InvalidInput` naming the line."""
        body = trace.read_bytes() if isinstance(trace, Path) else trace.encode() if isinstance(trace, str) else trace
        return self._json("PUT", f"/v1/traces/{name}", content=body, headers={"content-type": "text/plain"})

    def delete_trace(self, name: str) -> dict[str, Any]:
        """Deletes your trace `name`; runs already stored keep its content's hash."""
        return self._json("DELETE", f"/v1/traces/{name}")

    # ---- users and tokens -------------------------------------------------------------------

    def me(self) -> dict[str, Any]:
        """Who the token belongs to, the quotas in force and the runs they have queued."""
        return self._json("GET", "/v1/me")

    def users(self) -> list[dict[str, Any]]:
        """Every user (admins only)."""
        return self._json("GET", "/v1/users")

    def create_user(self, name: str, *, is_admin: bool = False, **quotas: int | None) -> dict[str, Any]:
        """A new user (admins only), with `token.token`: their first token, shown this once.
        Quotas: max_queued_runs, max_events_per_run, max_flows, submissions_per_minute."""
        return self._json("POST", "/v1/users", json={"name": name, "is_admin": is_admin, **quotas})

    def update_user(self, user_id: str, **changes: Any) -> dict[str, Any]:
        """Admins: quotas (None returns one to the server's default), is_admin, disabled."""
        return self._json("PATCH", f"/v1/users/{user_id}", json=changes)

    def tokens(self, *, user_id: str | None = None) -> list[dict[str, Any]]:
        return self._json("GET", "/v1/tokens", params={"user_id": user_id})

    def create_token(self, name: str, *, user_id: str | None = None) -> dict[str, Any]:
        """A new token (`token`, shown this once) for yourself, or (admins) for `user_id`."""
        body: dict[str, Any] = {"name": name} | ({"user_id": user_id} if user_id else {})
        return self._json("POST", "/v1/tokens", json=body)

    def revoke_token(self, token_id: str) -> dict[str, Any]:
        return self._json("DELETE", f"/v1/tokens/{token_id}")

    def sign_in_link(self, path: str = "/dashboard") -> dict[str, Any]:
        """A link that signs a browser in as you, once, within a minute, and opens `path` (a
        dashboard page: `/dashboard/sweeps/<id>`): for a notebook or a script that opens or
        screenshots a page. `url` is the link on this client's `base_url`."""
        link = self._json("POST", "/v1/sign-in-links", json={"path": path})
        return {**link, "url": self.base_url.rstrip("/") + link["link_path"]}

    # ---- schedules ------------------------------------------------------------------------

    def create_schedule(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """A schedule (`docs/schedules.md`): `{"name", "cron": "0 3 * * *" (UTC), "template":
        a sweep body, "enabled", "shared"}`. The template is built now: a bad one is
        `InvalidInput` with paths under `$.template`."""
        return self._json("POST", "/v1/schedules", json=dict(spec))

    def schedule(self, schedule_id: str) -> dict[str, Any]:
        return self._json("GET", f"/v1/schedules/{schedule_id}")

    def schedules(self, *, limit: int = 50, offset: int = 0, mine: bool = False) -> list[dict[str, Any]]:
        """The schedules you see (yours, the lab's shared ones), newest first."""
        params = {"limit": limit, "offset": offset, "mine": "true" if mine else None}
        return self._json("GET", "/v1/schedules", params=params)["items"]

    def update_schedule(self, schedule_id: str, **changes: Any) -> dict[str, Any]:
        """Changes name, cron, template, enabled or shared (owner or admin)."""
        return self._json("PATCH", f"/v1/schedules/{schedule_id}", json=changes)

    def enable_schedule(self, schedule_id: str, enabled: bool = True) -> dict[str, Any]:
        """Enables (its next firing is the cron's next time) or disables a schedule."""
        return self.update_schedule(schedule_id, enabled=enabled)

    def disable_schedule(self, schedule_id: str) -> dict[str, Any]:
        return self.update_schedule(schedule_id, enabled=False)

    def fire_schedule(self, schedule_id: str) -> dict[str, Any]:
        """Fires it now: returns the sweep it created (follow it with `wait_sweep`)."""
        return self._json("POST", f"/v1/schedules/{schedule_id}/fire")

    def schedule_sweeps(self, schedule_id: str, *, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
        """The sweeps it fired, latest firing first."""
        return self._json("GET", f"/v1/schedules/{schedule_id}/sweeps", params={"limit": limit, "offset": offset})[
            "items"
        ]

    def schedule_history(
        self,
        schedule_id: str,
        *,
        metric: str | Iterable[str] | None = None,
        flow: str | None = None,
        limit: int | None = None,
        format: TableFormat = "json",
    ) -> Any:
        """Per firing, point, flow group and metric: mean and 95 % interval, the baseline of
        the previous firings and `shift` ("up", "down" or None). `flow="core"` for the core's
        own `core_events_per_s` and `core_wall_s`."""
        metrics = [metric] if isinstance(metric, str) else list(metric) if metric is not None else None
        params = {"metric": metrics, "flow": flow, "limit": limit}
        return self._table(f"/v1/schedules/{schedule_id}/history", params, format)

    def delete_schedule(self, schedule_id: str) -> None:
        """Deletes it (owner or admin); the sweeps it fired stay."""
        self.request("DELETE", f"/v1/schedules/{schedule_id}")

    # ---- waiting --------------------------------------------------------------------------

    def _wait(
        self,
        fetch: Callable[[], dict[str, Any]],
        final: tuple[str, ...],
        show: Callable[[dict[str, Any]], None],
        timeout: float | None,
        poll: float,
        max_poll: float,
        what: str,
    ) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = poll
        last: dict[str, Any] | None = None
        while True:
            try:
                last = fetch()
            except Unavailable:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
            else:
                show(last)
                if last["status"] in final:
                    return last
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    status = last["status"] if last else "unknown"
                    raise WaitTimeout(f"{what} is still {status} after {timeout:g} s", body=last)
                time.sleep(min(delay, left))
            else:
                time.sleep(delay)
            delay = min(delay * 1.5, max_poll)

    # ---- experiments: tags, notes, search, archive, delete, two sweeps (docs/experiments.md) ----

    def find_runs(
        self,
        *,
        name: str | None = None,
        tags: Iterable[str] = (),
        params: Mapping[str, Any] | Iterable[str] | None = None,
        preset: str | None = None,
        status: str | None = None,
        archived: bool | Literal["all"] = False,
        mine: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """Runs by a substring of their name, all of `tags`, scenario parameters
        (`{"flows[0].variant": "cubic", "duration_s": 20}`, or `["duration_s=20"]` as the
        API reads them), preset and status, newest first; archived ones with `archived=True`
        (only them) or `"all"`."""
        return self._find("/v1/runs", name, tags, params, preset, status, archived, mine, limit, offset)

    def find_sweeps(
        self,
        *,
        name: str | None = None,
        tags: Iterable[str] = (),
        params: Mapping[str, Any] | Iterable[str] | None = None,
        preset: str | None = None,
        status: str | None = None,
        archived: bool | Literal["all"] = False,
        mine: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """Sweeps as `find_runs` finds runs (`status`: queued, running, done or cancelled); a
        parameter matches a sweep one of whose points has it."""
        return self._find("/v1/sweeps", name, tags, params, preset, status, archived, mine, limit, offset)

    def _find(
        self,
        path: str,
        name: str | None,
        tags: Iterable[str],
        params: Mapping[str, Any] | Iterable[str] | None,
        preset: str | None,
        status: str | None,
        archived: bool | str,
        mine: bool,
        limit: int,
        offset: int,
    ) -> list[dict[str, Any]]:
        """One page of `path`'s list (runs or sweeps) for these criteria."""
        query = self._search_query(name, tags, params, archived) | {"preset": preset, "status": status}
        query |= {"mine": "true" if mine else None, "limit": limit, "offset": offset}
        return self._json("GET", path, params=query)["items"]

    @staticmethod
    def _search_query(
        name: str | None, tags: Iterable[str], params: Mapping[str, Any] | Iterable[str] | None, archived: bool | str
    ) -> dict[str, Any]:
        """The query of a search: `param=PATH=VALUE` each, a value as JSON unless it is a
        string that does not read as JSON (then as it is: `cubic`, not `"cubic"`)."""
        import json

        def value_text(value: Any) -> str:
            if isinstance(value, str):
                try:
                    json.loads(value)
                except ValueError:
                    return value
            return json.dumps(value)

        return {
            "name": name,
            "tag": list(tags) or None,
            "param": (
                [f"{path}={value_text(v)}" for path, v in params.items()]
                if isinstance(params, Mapping)
                else list(params or [])
            )
            or None,
            "archived": archived if isinstance(archived, str) else ("true" if archived else None),  # false: the default
        }

    def update_run(self, run_id: str, **changes: Any) -> dict[str, Any]:
        """PATCH a run: `tags` (replace), `add_tags`, `remove_tags`, `note` (None clears it),
        `archived`, `shared`. Owner or admin."""
        return self._json("PATCH", f"/v1/runs/{run_id}", json=changes)

    def update_sweep(self, sweep_id: str, **changes: Any) -> dict[str, Any]:
        """PATCH a sweep, as `update_run`; archiving a sweep archives its runs."""
        return self._json("PATCH", f"/v1/sweeps/{sweep_id}", json=changes)

    def tag_run(self, run_id: str, *tags: str) -> list[str]:
        """Adds tags to a run; its tags after."""
        return self.update_run(run_id, add_tags=list(tags))["tags"]

    def untag_run(self, run_id: str, *tags: str) -> list[str]:
        return self.update_run(run_id, remove_tags=list(tags))["tags"]

    def tag_sweep(self, sweep_id: str, *tags: str) -> list[str]:
        return self.update_sweep(sweep_id, add_tags=list(tags))["tags"]

    def untag_sweep(self, sweep_id: str, *tags: str) -> list[str]:
        return self.update_sweep(sweep_id, remove_tags=list(tags))["tags"]

    def note_run(self, run_id: str, note: str | None) -> dict[str, Any]:
        return self.update_run(run_id, note=note)

    def note_sweep(self, sweep_id: str, note: str | None) -> dict[str, Any]:
        return self.update_sweep(sweep_id, note=note)

    def archive_run(self, run_id: str, archived: bool = True) -> dict[str, Any]:
        """Hides a finished run from the default lists (`archived=False` restores it)."""
        return self.update_run(run_id, archived=archived)

    def archive_sweep(self, sweep_id: str, archived: bool = True) -> dict[str, Any]:
        """Hides a sweep and its runs from the default lists (`archived=False` restores them)."""
        return self.update_sweep(sweep_id, archived=archived)

    def delete_run(self, run_id: str) -> dict[str, Any]:
        """Deletes a finished run and its result unless another run shares it; `{runs, results}`.
        `Conflict` while it is queued or running, or when it belongs to a sweep."""
        return self._json("DELETE", f"/v1/runs/{run_id}")

    def delete_sweep(self, sweep_id: str) -> dict[str, Any]:
        """Deletes a sweep with its runs, aggregates and unshared results; `{runs, results}`.
        `Conflict` while runs are queued or running: `cancel_sweep` first."""
        return self._json("DELETE", f"/v1/sweeps/{sweep_id}")

    def compare_sweeps(
        self,
        a: str,
        b: str,
        *,
        metric: str = "throughput_pkts_per_rtt",
        flow: str | None = None,
        format: TableFormat = "json",
    ) -> Any:
        """Two sweeps' summaries of `metric` aligned on their common axes and flow group:
        `a_*`, `b_*` statistics, `difference` and `ratio` of the means per row. `format`:
        json (the body, rows under "rows"), csv, parquet or frame (a DataFrame)."""
        return self._table("/v1/sweeps/compare", {"a": a, "b": b, "metric": metric, "flow": flow}, format)

    # ---- a sweep as one tidy table (issue 15) ---------------------------------------------

    def sweep_table(self, sweep_id: str, *, to_parquet: str | Path | None = None) -> pd.DataFrame:
        """The sweep as one tidy table (`GET /v1/sweeps/{id}/table`): a row per succeeded run ×
        (flow group | shared link | the run), columns `run_id`, `point`, `replication`,
        `seed`, `level`, `name`, `type`, `variant`, `app`, the axes under plain names
        (`loss_m`), then every metric (NaN where it is another level's). `to_parquet`: also
        write the server's Parquet file there."""
        data = self._table(f"/v1/sweeps/{sweep_id}/table", {}, "parquet")
        if to_parquet is not None:
            Path(to_parquet).write_bytes(data)
        return parquet_frame(data)

    def sweep_dataset(self, sweep_id: str) -> Any:
        """The sweep as an `xarray.Dataset`: every metric a variable over the axes (named as
        the table's columns; a zipped sweep has one `point` dimension with the axes as its
        coordinates) and `replication`, flow metrics also over `flow` (the groups), link
        metrics over `link`; `seed` is a coordinate of `replication`, each axis coordinate's
        `path` attribute its scenario path."""
        return self._dataset_of(self._table(f"/v1/sweeps/{sweep_id}/table", {}, "json"))

    @staticmethod
    def _dataset_of(body: Mapping[str, Any]) -> Any:
        import json

        import xarray as xr

        frame = rows_frame(body["rows"])
        axes = [a["column"] for a in body["axes"]]
        for column in axes:  # a list or object value as its JSON text: an index needs hashables
            if column in frame and frame[column].map(lambda v: isinstance(v, list | dict)).any():
                frame[column] = frame[column].map(
                    lambda v: json.dumps(v, sort_keys=True) if isinstance(v, list | dict) else v
                )
        by_point = body.get("combine") == "zip"
        dims = ["point"] if by_point else axes
        parts = []
        for level, dim in (("flow", "flow"), ("link", "link"), ("run", None)):
            rows = frame[frame["level"] == level] if "level" in frame else frame.iloc[:0]
            metrics = [m for m in body["metrics"][level] if m in rows]
            if rows.empty or not metrics:
                continue
            index = [*dims, "replication", *([dim] if dim else [])]
            rows = rows.rename(columns={"name": dim}) if dim else rows
            parts.append(rows.set_index(index)[metrics].to_xarray())
        dataset = xr.merge(parts) if parts else xr.Dataset()
        if not frame.empty:
            seeds = frame.drop_duplicates("replication").set_index("replication")["seed"]
            dataset = dataset.assign_coords(seed=("replication", seeds.reindex(dataset["replication"].values).values))
            if by_point:
                at = frame.drop_duplicates("point").set_index("point")
                dataset = dataset.assign_coords(
                    {a: ("point", at[a].reindex(dataset["point"].values).values) for a in axes}
                )
        for a in body["axes"]:
            if a["column"] in dataset.coords:
                dataset[a["column"]].attrs["path"] = a["path"]
        dataset.attrs.update(sweep_id=body.get("sweep_id") or "", preset=body.get("preset") or "")
        return dataset


def _query_value(value: Any) -> str:
    """Axis values as query text: numbers and strings as they are, lists as JSON."""
    import json

    if isinstance(value, str):
        return value
    return json.dumps(value)


def parquet_frame(data: bytes) -> pd.DataFrame:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data)).to_pandas()


def rows_csv(rows: list[Mapping[str, Any]]) -> str:
    """Rows (a run's flows) as CSV, the columns in order of first appearance."""
    import csv

    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return out.getvalue()


def rows_frame(rows: list[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as a DataFrame whose metric columns are numbers: undefined values (null in the
    JSON: a flow without a loss event has no drops per event) are NaN, as in the CSV."""
    import pandas as pd

    frame = pd.DataFrame([dict(r) for r in rows])
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object and all(
            v is None or isinstance(v, int | float) and not isinstance(v, bool) for v in values
        ):
            frame[column] = pd.to_numeric(values.astype("float64") if values.isna().any() else values)
    return frame


def rows_parquet(rows: list[Mapping[str, Any]]) -> bytes:
    """Rows as Parquet, with the column types of `rows_frame`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(rows_frame(rows), preserve_index=False), buffer)
    return buffer.getvalue()


__all__ = ["Client", "TcplabError"]
