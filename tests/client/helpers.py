"""Shared inputs of the client tests."""

from __future__ import annotations

# Short runs: the suite runs on 2 cores.
SHORT = {"duration_s": 5, "warmup_s": 1}
SHORT_RUN = {"preset": "paper000-fig2a", "overrides": SHORT}
TINY_SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 5},
    "axes": [{"path": "flows[*].loss.m", "values": [2, 8]}],
    "replications": 2,
}


def small_scenario(seed: int, duration_s: float = 3.0) -> dict:
    """A one-flow dumbbell, a few seconds long."""
    return {
        "duration_s": duration_s,
        "warmup_s": 1.0,
        "seed": seed,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
        "flows": [
            {
                "name": "a",
                "variant": "newreno-sbs",
                "rtt_ms": 40,
                "loss": {"type": "bernoulli_events", "p": 0.001, "m": 3},
            }
        ],
    }
