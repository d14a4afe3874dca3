"""services.sweeps.observations.level_metrics: a run's links as a sweep summarises them — the
core's fields under the sweeps' names, nested ones included (an 802.11 link's MAC counts)."""

from __future__ import annotations

import tcpsim
from services.presets import build_scenario
from services.scenarios import validate_scenario
from services.sweeps.observations import level_metrics


def test_an_80211_links_mac_counts_are_link_metrics_and_a_wired_link_has_none() -> None:
    scenario = build_scenario("paper004-table2-wireless-80211", {"duration_s": 60.0, "fade_snr_db": -3.0})
    scenario.pop("outputs", None)
    _, canonical = validate_scenario(scenario)
    result = tcpsim.run(canonical)
    observed = {name: metrics for name, level, metrics in level_metrics(result["fairness"], result["links"])}
    core = {link["name"]: link for link in result["links"]}

    wlan = observed["wlan-client"]
    mac = core["wlan-client"]["wifi"]
    assert wlan["mac_frames_sent"] == mac["frames_sent"] > 1000
    assert wlan["mac_retries"] == mac["mac_retries"] > 0
    assert (wlan["mac_retry_drops"], wlan["mac_collisions"]) == (mac["retry_drops"], mac["collisions"])
    assert wlan["link_packets"] == core["wlan-client"]["packets"]

    wired = observed["router-base-station"]
    assert wired["link_packets"] == core["router-base-station"]["packets"] > 1000
    assert [wired[m] for m in ("mac_frames_sent", "mac_retries", "mac_retry_drops", "mac_collisions")] == [None] * 4
