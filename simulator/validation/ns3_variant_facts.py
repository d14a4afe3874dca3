#!/usr/bin/env python3
"""How ns-3.44's TcpVeno, TcpHybla, TcpIllinois and TcpLedbat behave in the cross-check's dumbbells,
checked on the binary (docs/validation/ns3-crosscheck.md §6.2-6.5 rely on it).

    .venv-ns3/bin/python simulator/validation/ns3_variant_facts.py veno            # about 15 s
    .venv-ns3/bin/python simulator/validation/ns3_variant_facts.py hybla --shape 8x15M --seed 2
    .venv-ns3/bin/python simulator/validation/ns3_variant_facts.py ledbat --peer-script /work/shared/peers/ns3/dumbbell.py

A subclass of the variant (`Spy<TcpX>`) takes its place in the peer's dumbbell.py with the
cross-check's command (ns3_crosscheck.py --dry-run --variants family) and only watches: it
passes every call on unchanged, so the run is the variant's own (its goodput and drops are the
cross-check's). Per TCP flow it tallies, from the warm-up on:

* segments acknowledged (PktsAcked), so the flows can be matched with the run's per-flow goodput;
* IncreaseWindow calls in congestion avoidance (cwnd >= ssthresh), and how many of them grew
  or shrank cwnd; cwnd's lowest and highest value (segments);
* GetSsThresh calls (a loss), and how many returned half of the bytes in flight (NewReno's);
* veno: IncreaseWindow calls made with more than two RTT samples since the previous one (TcpVeno's
  `m_cntRtt > 2`, which its IncreaseWindow resets at its end), the only ones that run Veno's growth;
* hybla: PktsAcked calls whose RTT equals `tcb->m_minRtt`, the only ones on which TcpHybla
  recomputes rho (from `m_minRtt`; rho is 1 until then), over the whole run, and the last rho;
* ledbat: the lowest one-way delay TcpLedbat sees (TSval - TSecr of the ACKs, ms), over the run.

One variant per process: the peer script sets itself up once per process.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
from pathlib import Path

DEFAULT_PEER = Path(__file__).resolve().parents[2].parent / "shared" / "peers" / "ns3" / "dumbbell.py"
SHAPES = {"4x10M": (4, 10, 60), "8x15M": (8, 15, 90)}  # flows, Mb/s, buffer: ns3_crosscheck.SHAPES
VARIANTS = {"veno": "TcpVeno", "hybla": "TcpHybla", "illinois": "TcpIllinois", "ledbat": "TcpLedbat"}
WARMUP_S = 10

SPY = r"""
namespace facts {
struct Flow {
  double firstCallS = -1, acked = 0, caCalls = 0, caGrew = 0, caShrank = 0, venoGrowth = 0;
  double cuts = 0, halved = 0, cwndLo = 1e18, cwndHi = 0, rhoRecalcs = 0, lastRhoMinRttMs = -1, minOwdMs = 1e18;
  uint32_t sinceIncrease = 0;
};
std::map<const void*, Flow> flows;
double warmup = 10;
bool InWindow() { return ns3::Simulator::Now().GetSeconds() >= warmup; }

template <class Base>
class Spy : public Base {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("ns3::Spy" + Base::GetTypeId().GetName().substr(5))
                                 .template SetParent<Base>().SetGroupName("Internet").template AddConstructor<Spy<Base>>();
    return tid;
  }
  Spy() : Base() {}
  Spy(const Spy& o) : Base(o) {}
  void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t n, const ns3::Time& rtt) override {
    Flow& f = flows[this];
    if (f.firstCallS < 0) f.firstCallS = ns3::Simulator::Now().GetSeconds();
    if (InWindow()) f.acked += n;
    if (!rtt.IsZero()) ++f.sinceIncrease;
    if (rtt == tcb->m_minRtt) { ++f.rhoRecalcs; f.lastRhoMinRttMs = tcb->m_minRtt.GetSeconds() * 1000; }
    if (tcb->m_rcvTimestampValue != 0 && tcb->m_rcvTimestampEchoReply != 0 && rtt.IsPositive())
      f.minOwdMs = std::min(f.minOwdMs, double(tcb->m_rcvTimestampValue - tcb->m_rcvTimestampEchoReply));
    Base::PktsAcked(tcb, n, rtt);
  }
  void IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t n) override {
    Flow& f = flows[this];
    uint32_t before = tcb->m_cWnd;
    bool ca = tcb->m_cWnd >= tcb->m_ssThresh;
    if (ca && InWindow() && f.sinceIncrease > 2) ++f.venoGrowth;
    f.sinceIncrease = 0;
    Base::IncreaseWindow(tcb, n);
    if (InWindow()) {
      double seg = double(tcb->m_cWnd) / tcb->m_segmentSize;
      f.cwndLo = std::min(f.cwndLo, seg); f.cwndHi = std::max(f.cwndHi, seg);
      if (ca) { ++f.caCalls; if (tcb->m_cWnd > before) ++f.caGrew; if (tcb->m_cWnd < before) ++f.caShrank; }
    }
  }
  uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t inflight) override {
    uint32_t r = Base::GetSsThresh(tcb, inflight);
    if (InWindow()) {
      Flow& f = flows[this];
      ++f.cuts;
      if (r == std::max(2 * tcb->m_segmentSize, inflight / 2)) ++f.halved;
    }
    return r;
  }
  ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<Spy<Base>>(this); }
};
std::vector<Flow> Sorted() {
  std::vector<Flow> v;
  for (auto& kv : flows) if (kv.second.firstCallS >= 0) v.push_back(kv.second);
  std::sort(v.begin(), v.end(), [](const Flow& a, const Flow& b) { return a.acked > b.acked; });
  return v;
}
}
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("variant", choices=VARIANTS)
    p.add_argument("--shape", choices=SHAPES, default="4x10M")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--peer-script", default=str(DEFAULT_PEER), help="the ns-3 peer's dumbbell.py")
    a = p.parse_args()

    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415 (8-25 s: cling parses the ns-3 headers)

    cppyy.cppdef(SPY)
    cls = VARIANTS[a.variant]
    cppyy.cppdef(f"namespace facts {{ void Register() {{ Spy<ns3::{cls}>::GetTypeId(); }} }}")
    cppyy.gbl.facts.Register()
    cppyy.gbl.facts.warmup = WARMUP_S
    if a.variant == "hybla":  # the cross-check's setting (ns3_crosscheck.FAMILY)
        ns.Config.SetDefault("ns3::TcpHybla::RRTT", ns.TimeValue(ns.MilliSeconds(25)))
    spec = importlib.util.spec_from_file_location("ns3_peer_dumbbell", a.peer_script)
    assert spec is not None and spec.loader is not None
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    n, mbps, buf = SHAPES[a.shape]
    args = (
        f"--flows {n} --variant Spy{cls} --bottleneck-mbps {mbps} --rtt-ms 50 --queue-pkts {buf} --access-mbps 1000"
        " --access-delay-ms 0.5 --access-queue-pkts 1000 --segment-size 1000 --initial-cwnd 10 --min-rto-ms 1000"
        f" --clock-granularity-ms 1 --delack-count 1 --timestamps on --sim-seconds 60 --warmup-seconds {WARMUP_S}"
        f" --start-spread-s 1 --seed {a.seed} --recovery TcpClassicRecovery --sack on"
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        peer.main(args.split())
    run = json.loads(out.getvalue().strip().splitlines()[-1])
    goodput = sorted(run["per_flow_goodput_mbps"], reverse=True)
    print(
        f"{cls} {a.shape} seed {a.seed}: {run['aggregate_goodput_mbps']:.3f} Mb/s, "
        f"{run['window_queue_drops']} drops in the window; per flow, most segments acknowledged first:"
    )
    for f, mb in zip(cppyy.gbl.facts.Sorted(), goodput, strict=False):
        line = (
            f"  {mb:.3f} Mb/s: {f.acked:.0f} segments acked; congestion avoidance: {f.caCalls:.0f} IncreaseWindow,"
            f" {f.caGrew:.0f} grew cwnd, {f.caShrank:.0f} shrank it; cwnd {f.cwndLo:.1f}-{f.cwndHi:.1f} segments;"
            f" {f.cuts:.0f} losses ({f.halved:.0f} halved)"
        )
        if a.variant == "veno":
            line += f"; with m_cntRtt > 2 (Veno's growth) {f.venoGrowth:.0f}"
        if a.variant == "hybla":
            rho = max(f.lastRhoMinRttMs / 25, 1.0) if f.rhoRecalcs else 1.0
            line += f"; rho recomputed {f.rhoRecalcs:.0f} times in the run, last rho {rho:.2f}"
        if a.variant == "ledbat":
            line += f"; lowest one-way delay {f.minOwdMs:.0f} ms"
        print(line)


if __name__ == "__main__":
    main()
