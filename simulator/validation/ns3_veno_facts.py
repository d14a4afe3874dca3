#!/usr/bin/env python3
"""How ns-3.44's TcpVeno grows and cuts in the cross-check's 4x10M dumbbell, checked on the binary.

    .venv-ns3/bin/python simulator/validation/ns3_veno_facts.py    # about 15 s
    .venv-ns3/bin/python simulator/validation/ns3_veno_facts.py /work/shared/peers/ns3/dumbbell.py   # from a worktree

docs/validation/ns3-crosscheck.md §6.2 relies on it. tcp-veno.cc runs Veno's own growth (one
segment every other round trip once the backlog N reaches Beta) only when `m_cntRtt > 2`:
more than two RTT samples (PktsAcked calls with an RTT) since the last IncreaseWindow, which
resets the count at its end. A TcpVeno subclass keeps that count itself and tallies it on every
IncreaseWindow in congestion avoidance, and tallies which decrease GetSsThresh returned (half of
the bytes in flight, NewReno's, or 4/5). The subclass only watches: the run's goodput and drops
are TcpVeno's (seed 1 of the cross-check: 9.447 Mb/s, 136 drops in the window).

A separate script from ns3_facts.py because the peer's dumbbell.py runs once per process.
"""

import contextlib
import importlib.util
import io
import json
import sys
from pathlib import Path

# The peer's dumbbell.py: the first argument, else ../shared beside the repository.
PEER = (
    sys.argv[1]
    if len(sys.argv) > 1
    else str(Path(__file__).resolve().parents[2].parent / "shared" / "peers" / "ns3" / "dumbbell.py")
)
# The cross-check's veno 4x10M seed 1 (ns3_crosscheck.py --dry-run --variants veno), SpyVeno
# in TcpVeno's place.
ARGS = (
    "--flows 4 --variant SpyVeno --bottleneck-mbps 10 --rtt-ms 50 --queue-pkts 60 --access-mbps 1000"
    " --access-delay-ms 0.5 --access-queue-pkts 1000 --segment-size 1000 --initial-cwnd 10 --min-rto-ms 1000"
    " --clock-granularity-ms 1 --delack-count 1 --timestamps on --sim-seconds 60 --warmup-seconds 10"
    " --start-spread-s 1 --seed 1 --recovery TcpClassicRecovery --sack on"
)

import cppyy  # noqa: E402
from ns import ns  # noqa: E402, F401 (loads ns-3 into cppyy)

cppyy.cppdef(r"""
namespace venospy {
struct Tally {
  uint64_t samples = 0, slowStart = 0, avoidance = 0, venoGrowth = 0, cuts = 0, halved = 0;
  uint64_t count[8] = {0};
};
Tally tally;
class SpyVeno : public ns3::TcpVeno {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("ns3::SpyVeno").SetParent<ns3::TcpVeno>().SetGroupName("Internet").AddConstructor<SpyVeno>();
    return tid;
  }
  uint32_t sinceIncrease = 0;  // TcpVeno's m_cntRtt, kept the same way
  SpyVeno() : ns3::TcpVeno() {}
  SpyVeno(const SpyVeno& o) : ns3::TcpVeno(o), sinceIncrease(o.sinceIncrease) {}
  void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t n, const ns3::Time& rtt) override {
    if (!rtt.IsZero()) { ++sinceIncrease; ++tally.samples; }
    ns3::TcpVeno::PktsAcked(tcb, n, rtt);
  }
  void IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t n) override {
    if (tcb->m_cWnd >= tcb->m_ssThresh) {
      ++tally.avoidance;
      if (sinceIncrease > 2) ++tally.venoGrowth;
      tally.count[std::min<uint32_t>(sinceIncrease, 7)]++;
    } else {
      ++tally.slowStart;
    }
    sinceIncrease = 0;
    ns3::TcpVeno::IncreaseWindow(tcb, n);
  }
  uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t inflight) override {
    uint32_t r = ns3::TcpVeno::GetSsThresh(tcb, inflight);
    ++tally.cuts;
    if (r == std::max(2 * tcb->m_segmentSize, inflight / 2)) ++tally.halved;
    return r;
  }
  ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<SpyVeno>(this); }
};
void Register() { SpyVeno::GetTypeId(); }
}
""")
cppyy.gbl.venospy.Register()
spec = importlib.util.spec_from_file_location("peer", PEER)
assert spec is not None and spec.loader is not None
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    peer.main(ARGS.split())
run = json.loads(out.getvalue().strip().splitlines()[-1])
t = cppyy.gbl.venospy.tally
print(f"run: {run['aggregate_goodput_mbps']:.3f} Mb/s, {run['window_queue_drops']} drops in the window")
print(
    f"PktsAcked with an RTT {t.samples}; IncreaseWindow in slow start {t.slowStart}, in congestion avoidance "
    f"{t.avoidance}, of which with m_cntRtt > 2 (Veno's own growth) {t.venoGrowth}"
)
print("m_cntRtt at IncreaseWindow in congestion avoidance, 0..7+:", [int(t.count[i]) for i in range(8)])
print(f"GetSsThresh {t.cuts}: half the bytes in flight {t.halved}, 4/5 {t.cuts - t.halved}")
