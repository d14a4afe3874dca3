#!/usr/bin/env python3
"""The ns-3 peer's dumbbell with an AQM queue disc at the bottleneck, ECN, and the queue's metrics.

Run it with the ns-3 venv's Python (it imports `ns`); ns3_aqm_crosscheck.py does:

    .venv-ns3/bin/python simulator/validation/ns3_aqm_probe.py --peer-script ../shared/peers/ns3/dumbbell.py \
        --queue codel [--queue-attr Target=5ms --queue-attr Interval=100ms ...] [--quantum 1514] [--ecn] \
        [--set ns3::TcpCubic::HyStart=false ...] -- <dumbbell.py options, --queue-pkts is the queue disc's limit>

The peer's `--qdisc pfifo` path (a FifoQueueDisc of --queue-pkts packets on both bottleneck devices,
the device queues cut to 1 packet, so the queue disc is the bottleneck buffer) is run through
ns3_dumbbell_probe.py (its timeout / recovery / retransmission counts and attribute defaults),
with two changes made here without editing either script:

1. `--queue` swaps the FifoQueueDisc's TypeId for ns3::CoDelQueueDisc, FqCoDelQueueDisc,
   PieQueueDisc or RedQueueDisc (`pfifo` keeps FIFO). The peer asks `ns.TrafficControlHelper` for
   the FIFO; this script hands it a helper that installs the chosen type with the same MaxSize
   (the `ns` module's attribute is replaced by a proxy that changes nothing else).
   `--queue-attr NAME=VALUE` sets `ns3::<Type>::NAME` (Config::SetDefault with a string, parsed
   by the attribute's own checker: `5ms`, `20`, `true`). RED gets LinkBandwidth and LinkDelay
   from the bottleneck unless given (ns-3's defaults are 1.5 Mb/s and 20 ms, used to age the
   average over idle time). FQ-CoDel has no Quantum attribute: `--quantum` calls SetQuantum
   (otherwise ns-3 takes the device MTU, 1500 bytes).
2. `--ecn` sets `ns3::TcpSocketBase::UseEcn` = On (ECT(0) on data, ECE/CWR) and the queue
   disc's `UseEcn` = true (mark CE instead of an early drop).

Measured at L's bottleneck queue disc (the data direction) in the window [warmup, sim-seconds],
by C++ trace sinks connected at t = 0 (nothing Python runs inside the event loop):
* `qdisc_mean_queue_pkts`: the queue disc's `PacketsInQueue` integrated over the window;
  `device_queue_mean_pkts` the device queue's (0..1, from ns3_dumbbell_probe.py); their sum
  `mean_queue_pkts` counts every packet waiting, as tcpsim's `mean_queue_pkts` does (the one
  being serialised is in neither).
* `queue_delay_ms` {mean, p50, p95, p99, max, n}: for each packet the queue disc accepted in the
  window (`Enqueue` trace), the time from that acceptance to the start of its transmission
  (`PhyTxBegin` on the device), the packets that did not wait included: tcpsim's
  `*_queue_delay_s` (acceptance to the start of transmission). Percentiles by nearest rank.
* `qdisc_sojourn_ms` {mean, p95, p99, n}: the queue disc's own `SojournTime` trace (enqueue to
  its dequeue), which leaves out the up to one packet time spent in the 1-packet device queue.
  CoDel, FQ-CoDel and PIE act on this one.
* `drops_window` {reason: count}: `DropBeforeEnqueue` / `DropAfterDequeue` with ns-3's reason
  strings ("Overlimit drop", "Target exceeded drop", "Forced drop", "Unforced drop"; FQ-CoDel's
  per-flow CoDel drops come prefixed "(Dropped by child queue disc) "), `marks_window` the same
  for `Mark` ("Target exceeded mark", "Unforced mark", "Forced mark"); their totals, and the
  queue disc's whole-run `GetStats()` printout (`qdisc_stats_run`).
* `qdisc_attributes`: every attribute of the installed queue disc as it ran.

Prints the probe's JSON line with these fields added (and `queue`, `ecn`, `qdisc_type`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ns3_dumbbell_probe  # noqa: E402  (the probe this one extends; imports ns only inside main)

QDISC_TYPES = {
    "pfifo": "ns3::FifoQueueDisc",
    "codel": "ns3::CoDelQueueDisc",
    "fq_codel": "ns3::FqCoDelQueueDisc",
    "pie": "ns3::PieQueueDisc",
    "red": "ns3::RedQueueDisc",
}

CPP = r"""
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
namespace aqmprobe {
struct Meter {
  double from = 0, to = 0;
  bool connected = false;
  std::string error;
  // time-averaged queue disc length
  double area = 0, last = 0; uint32_t len = 0, maxLen = 0;
  // acceptance -> start of transmission
  std::unordered_map<uint64_t, double> enq;   // packet uid -> enqueue time (s)
  std::vector<double> delay;                  // s, packets accepted in the window
  std::vector<double> sojourn;                // s, SojournTime trace, dequeued in the window
  std::map<std::string, uint64_t> drops, marks;
  ns3::Ptr<ns3::QueueDisc> qd;
  ns3::Ptr<ns3::PointToPointNetDevice> dev;
  std::string statsAtClose, attrsAtClose;  // read at the window's end, before Simulator::Destroy
  double Now() const { return ns3::Simulator::Now().GetSeconds(); }
  void Len(uint32_t, uint32_t v) {
    double t = Now();
    if (t > from) area += len * (t - std::max(last, from));
    last = t; len = v;
    if (t >= from && len > maxLen) maxLen = len;
  }
  void Enq(ns3::Ptr<const ns3::QueueDiscItem> item) { enq[item->GetPacket()->GetUid()] = Now(); }
  void Forget(ns3::Ptr<const ns3::QueueDiscItem> item) { enq.erase(item->GetPacket()->GetUid()); }
  void Tx(ns3::Ptr<const ns3::Packet> p) {
    auto it = enq.find(p->GetUid());
    if (it == enq.end()) return;
    if (it->second >= from && it->second <= to) delay.push_back(Now() - it->second);
    enq.erase(it);
  }
  void Sojourn(ns3::Time s) { double t = Now(); if (t >= from && t <= to) sojourn.push_back(s.GetSeconds()); }
  void DropBefore(ns3::Ptr<const ns3::QueueDiscItem> item, const char* why) {
    Forget(item);
    double t = Now(); if (t >= from && t <= to) ++drops[why];
  }
  void DropAfter(ns3::Ptr<const ns3::QueueDiscItem> item, const char* why) { DropBefore(item, why); }
  void Mark(ns3::Ptr<const ns3::QueueDiscItem>, const char* why) {
    double t = Now(); if (t >= from && t <= to) ++marks[why];
  }
  void Open() { last = from; maxLen = len; area = 0; }
  void Close() {
    double t = Now(); area += len * (t - std::max(last, from)); last = t; to = t;
    statsAtClose = ReadStats(); attrsAtClose = ReadAttributes();
  }
  double MeanLen() const { return to > from ? area / (to - from) : 0.0; }
  static double Rank(std::vector<double>& v, double q) {  // nearest rank
    if (v.empty()) return -1;
    size_t k = (size_t)std::ceil(q * v.size());
    if (k < 1) k = 1;
    std::nth_element(v.begin(), v.begin() + (k - 1), v.end());
    return v[k - 1];
  }
  static std::string Summary(std::vector<double> v) {  // ms
    std::ostringstream o;
    o.precision(6);
    if (v.empty()) { o << "{\"n\": 0}"; return o.str(); }
    double sum = 0, mx = 0;
    for (double x : v) { sum += x; mx = std::max(mx, x); }
    o << "{\"n\": " << v.size() << ", \"mean\": " << 1e3 * sum / v.size()
      << ", \"p50\": " << 1e3 * Rank(v, 0.50) << ", \"p95\": " << 1e3 * Rank(v, 0.95)
      << ", \"p99\": " << 1e3 * Rank(v, 0.99) << ", \"max\": " << 1e3 * mx << "}";
    return o.str();
  }
  static std::string Counts(const std::map<std::string, uint64_t>& m) {
    std::ostringstream o;
    o << "{";
    bool first = true;
    for (auto& kv : m) { o << (first ? "" : ", ") << "\"" << kv.first << "\": " << kv.second; first = false; }
    o << "}";
    return o.str();
  }
  std::string DelayJson() const { return Summary(delay); }
  std::string SojournJson() const { return Summary(sojourn); }
  std::string DropsJson() const { return Counts(drops); }
  std::string MarksJson() const { return Counts(marks); }
  std::string ReadStats() const {
    if (!qd) return "";
    std::ostringstream o; qd->GetStats().Print(o); return o.str();
  }
  // Every attribute of the queue disc as installed: "name\tvalue" lines.
  std::string ReadAttributes() const {
    if (!qd) return "";
    std::string out;
    ns3::TypeId tid = qd->GetInstanceTypeId();
    for (uint32_t i = 0; i < tid.GetAttributeN(); ++i) {
      ns3::TypeId::AttributeInformation a = tid.GetAttribute(i);
      if (!(a.flags & ns3::TypeId::ATTR_GET) || !a.accessor->HasGetter()) continue;  // e.g. RED's Alpha
      ns3::StringValue v;
      qd->GetAttribute(a.name, v);
      out += a.name + "\t" + v.Get() + "\n";
    }
    auto fq = ns3::DynamicCast<ns3::FqCoDelQueueDisc>(qd);
    if (fq) out += "(quantum, SetQuantum)\t" + std::to_string(fq->GetQuantum()) + "\n";
    return out;
  }
};
// L's bottleneck device: the slowest point-to-point device, the first found (the lower node id),
// as ns3_dumbbell_probe.py's Attach picks it; then its root queue disc.
void Attach(Meter* m, uint32_t quantum) {
  uint64_t bestRate = 0;
  for (uint32_t i = 0; i < ns3::NodeList::GetNNodes(); ++i) {
    ns3::Ptr<ns3::Node> node = ns3::NodeList::GetNode(i);
    for (uint32_t d = 0; d < node->GetNDevices(); ++d) {
      auto p2p = ns3::DynamicCast<ns3::PointToPointNetDevice>(node->GetDevice(d));
      if (!p2p) continue;
      ns3::DataRateValue rate;
      p2p->GetAttribute("DataRate", rate);
      uint64_t r = rate.Get().GetBitRate();
      if (!m->dev || r < bestRate) { m->dev = p2p; bestRate = r; }
    }
  }
  if (!m->dev) { m->error = "no point-to-point device"; return; }
  ns3::Ptr<ns3::TrafficControlLayer> tc = m->dev->GetNode()->GetObject<ns3::TrafficControlLayer>();
  m->qd = tc ? tc->GetRootQueueDiscOnDevice(m->dev) : nullptr;
  if (!m->qd) { m->error = "no root queue disc on the bottleneck device (run the peer with --qdisc pfifo)"; return; }
  if (quantum) {
    auto fq = ns3::DynamicCast<ns3::FqCoDelQueueDisc>(m->qd);
    if (fq) fq->SetQuantum(quantum);
  }
  bool ok = m->qd->TraceConnectWithoutContext("PacketsInQueue", ns3::MakeCallback(&Meter::Len, m));
  ok &= m->qd->TraceConnectWithoutContext("Enqueue", ns3::MakeCallback(&Meter::Enq, m));
  ok &= m->qd->TraceConnectWithoutContext("SojournTime", ns3::MakeCallback(&Meter::Sojourn, m));
  ok &= m->qd->TraceConnectWithoutContext("DropBeforeEnqueue", ns3::MakeCallback(&Meter::DropBefore, m));
  ok &= m->qd->TraceConnectWithoutContext("DropAfterDequeue", ns3::MakeCallback(&Meter::DropAfter, m));
  ok &= m->qd->TraceConnectWithoutContext("Mark", ns3::MakeCallback(&Meter::Mark, m));
  ok &= m->dev->TraceConnectWithoutContext("PhyTxBegin", ns3::MakeCallback(&Meter::Tx, m));
  m->connected = ok;
  if (!ok) m->error = "a trace source did not connect";
}
void Arm(Meter* m, double from, double to, uint32_t quantum) {
  m->from = from; m->to = to;
  // At t = 0, before the nodes' own initialisation events (the peer creates the nodes later, so
  // their Initialize events come after this one): the quantum is set before FQ-CoDel's
  // CheckConfig would take the MTU.
  ns3::Simulator::Schedule(ns3::Seconds(0), &Attach, m, quantum);
  ns3::Simulator::Schedule(ns3::Seconds(from), &Meter::Open, m);
  ns3::Simulator::Schedule(ns3::Seconds(to), &Meter::Close, m);
}
}
"""


class _TchProxy:
    """A TrafficControlHelper that installs `qdisc_type` wherever the peer asks for a FIFO."""

    def __init__(self, real_cls, qdisc_type: str, installed: list):
        self._real = real_cls()
        self._type = qdisc_type
        self._installed = installed

    def SetRootQueueDisc(self, type_id, *args):  # noqa: N802 (ns-3's name)
        if str(type_id) == "ns3::FifoQueueDisc":
            type_id = self._type
            self._installed.append(type_id)
        return self._real.SetRootQueueDisc(type_id, *args)

    def __getattr__(self, name):
        return getattr(self._real, name)


class _NsProxy:
    """The `ns` namespace, except TrafficControlHelper (see _TchProxy)."""

    def __init__(self, real, qdisc_type: str, installed: list):
        self._real = real
        self._type = qdisc_type
        self._installed = installed

    def TrafficControlHelper(self):  # noqa: N802
        return _TchProxy(self._real.TrafficControlHelper, self._type, self._installed)

    def __getattr__(self, name):
        return getattr(self._real, name)


def load_peer(path: str):
    spec = importlib.util.spec_from_file_location("ns3_peer_dumbbell_aqm", path)
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    return peer


def parse_own(own: list[str]) -> argparse.Namespace:
    """This script's options (those before `--`)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--peer-script", required=True)
    p.add_argument("--queue", choices=list(QDISC_TYPES), default="pfifo")
    p.add_argument("--queue-attr", action="append", default=[], metavar="NAME=VALUE",
                   help="ns3::<queue disc type>::NAME (repeat)")  # fmt: skip
    p.add_argument("--quantum", type=int, default=0, help="FQ-CoDel's quantum in bytes (0: ns-3 takes the device MTU)")
    p.add_argument("--ecn", action="store_true", help="TcpSocketBase::UseEcn=On and the queue disc's UseEcn=true")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="passed to ns3_dumbbell_probe.py")
    return p.parse_args(own)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    k = argv.index("--") if "--" in argv else len(argv)
    own, peer_args = argv[:k], argv[k + 1 :]
    a = parse_own(own)
    qtype = QDISC_TYPES[a.queue]
    peer_args = [*peer_args, "--qdisc", "pfifo"]  # the last one wins: the queue disc path
    peer = load_peer(a.peer_script)
    pa = peer.parse_args(peer_args)  # validates before the slow import

    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415 (8-25 s: cling parses the ns-3 headers)

    # Queue disc attributes, as strings: each attribute's checker parses its own type.
    attrs: dict[str, str] = {}
    if a.queue == "red":
        bneck_delay_ms = pa.rtt_ms / 2 - 2 * pa.access_delay_ms
        attrs["LinkBandwidth"] = f"{pa.bottleneck_mbps:g}Mbps"
        attrs["LinkDelay"] = f"{bneck_delay_ms:g}ms"
    if a.queue != "pfifo":
        attrs["UseEcn"] = "true" if a.ecn else "false"
    for item in a.queue_attr:
        name, _, raw = item.partition("=")
        attrs[name] = raw
    applied = {}
    for name, raw in attrs.items():
        full = f"{qtype}::{name}"
        ns.Config.SetDefault(full, ns.StringValue(raw))
        applied[full] = raw
    if a.ecn:
        ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))
        applied["ns3::TcpSocketBase::UseEcn"] = "On"

    cppyy.cppdef(CPP)
    meter = cppyy.gbl.aqmprobe.Meter()
    cppyy.gbl.aqmprobe.Arm(meter, float(pa.warmup_seconds), float(pa.sim_seconds), int(a.quantum))

    installed: list[str] = []
    ns_module = sys.modules["ns"]
    real_ns = ns_module.ns
    ns_module.ns = _NsProxy(real_ns, qtype, installed)
    sets = [x for s in a.set for x in ("--set", s)]
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            rc = ns3_dumbbell_probe.main(["--peer-script", a.peer_script, *sets, "--", *peer_args])
    finally:
        ns_module.ns = real_ns
    if rc:
        sys.stderr.write(buf.getvalue())
        return rc
    if not installed:
        sys.stderr.write("ns3_aqm_probe: the peer installed no FIFO queue disc to replace\n")
        return 3
    if not meter.connected:
        sys.stderr.write(f"ns3_aqm_probe: {meter.error}\n")
        return 3
    out = json.loads([x for x in buf.getvalue().splitlines() if x.startswith("{")][-1])
    drops = json.loads(str(meter.DropsJson()))
    marks = json.loads(str(meter.MarksJson()))
    dev_mean = out.get("mean_queue_pkts") or 0.0
    out.update(
        {
            "queue": a.queue,
            "qdisc_type": qtype,
            "ecn": a.ecn,
            "quantum": a.quantum or None,
            "device_queue_mean_pkts": dev_mean,
            "device_queue_max_pkts": out.get("max_queue_pkts"),
            "qdisc_mean_queue_pkts": round(float(meter.MeanLen()), 4),
            "qdisc_max_queue_pkts": int(meter.maxLen),
            "mean_queue_pkts": round(float(meter.MeanLen()) + dev_mean, 4),
            "queue_delay_ms": json.loads(str(meter.DelayJson())),
            "qdisc_sojourn_ms": json.loads(str(meter.SojournJson())),
            "drops_window": drops,
            "drops_window_total": sum(drops.values()),
            "marks_window": marks,
            "marks_window_total": sum(marks.values()),
            "qdisc_stats_run": str(meter.statsAtClose),
            "qdisc_attributes": dict(
                line.split("\t", 1) for line in str(meter.attrsAtClose).splitlines() if "\t" in line
            ),
            "queue_defaults": applied,
        }
    )
    out.pop("max_queue_pkts", None)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
