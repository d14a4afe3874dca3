#!/usr/bin/env python3
"""Facts about ns-3.44 that docs/validation/ns3-crosscheck.md relies on, checked on the binary.

    .venv-ns3/bin/python simulator/validation/ns3_facts.py    # about 40 s

1. What GetSsThresh returns after a loss for TcpNewReno, TcpVegas and TcpCubic (a fresh
   congestion-control object and socket state: cwnd 20 segments, 20 in flight).
2. Attribute defaults: CUBIC's HyStart, beta, C; Vegas's Alpha, Beta, Gamma; BBR's HighGain;
   pacing; limited transmit; the RTT estimator's gains and initial value.
3. What the socket's two RTT trace sources carry (1 NewReno flow through the peer's dumbbell):
   "RTT" the smoothed estimate, "LastRTT" the last sample (whole milliseconds: timestamps).
4. Which of them ns-3 hands to TcpCongestionOps::PktsAcked, the RTT every delay-based variant
   (Vegas's BaseRTT and per-round minimum) sees: a TcpVegas subclass compares the argument with
   tcb->m_lastRtt and tcb->m_srtt on every call (2 flows, 6 s).
"""

from pathlib import Path

PEER = str(Path(__file__).resolve().parents[2].parent / "shared" / "peers" / "ns3" / "dumbbell.py")
import cppyy  # noqa: E402
from ns import ns  # noqa: E402 (ns-3 found through the path set above)

cppyy.cppdef(r"""
namespace chk {
uint32_t Ss(std::string type, uint32_t cwndSeg, uint32_t ssthSeg, uint32_t inflightSeg) {
  ns3::ObjectFactory f; f.SetTypeId(type);
  ns3::Ptr<ns3::TcpCongestionOps> cc = f.Create<ns3::TcpCongestionOps>();
  ns3::Ptr<ns3::TcpSocketState> tcb = ns3::CreateObject<ns3::TcpSocketState>();
  tcb->m_segmentSize = 1000;
  tcb->m_cWnd = cwndSeg * 1000;
  tcb->m_ssThresh = ssthSeg * 1000;
  return cc->GetSsThresh(tcb, inflightSeg * 1000) / 1000;
}
std::string Attr(std::string type, std::string name) {
  ns3::TypeId tid = ns3::TypeId::LookupByName(type);
  ns3::TypeId::AttributeInformation info;
  if (!tid.LookupAttributeByName(name, &info)) return "?";
  return info.initialValue->SerializeToString(info.checker);
}
}
""")
c = cppyy.gbl.chk
for t in ("ns3::TcpNewReno", "ns3::TcpVegas", "ns3::TcpCubic"):
    print(
        t,
        "GetSsThresh(cwnd 20, ssthresh 1000, inflight 20) =",
        c.Ss(t, 20, 1000, 20),
        "segments; (cwnd 20, ssthresh 15, inflight 20) =",
        c.Ss(t, 20, 15, 20),
    )
for t, a in (
    ("ns3::TcpCubic", "HyStart"),
    ("ns3::TcpCubic", "Beta"),
    ("ns3::TcpCubic", "C"),
    ("ns3::TcpCubic", "FastConvergence"),
    ("ns3::TcpCubic", "TcpFriendliness"),
    ("ns3::TcpVegas", "Alpha"),
    ("ns3::TcpVegas", "Beta"),
    ("ns3::TcpVegas", "Gamma"),
    ("ns3::TcpBbr", "HighGain"),
    ("ns3::TcpSocketState", "EnablePacing"),
    ("ns3::TcpSocketBase", "LimitedTransmit"),
    ("ns3::RttEstimator", "InitialEstimation"),
    ("ns3::RttMeanDeviation", "Alpha"),
    ("ns3::RttMeanDeviation", "Beta"),
):
    print(t, a, "=", c.Attr(t, a))

# Which TcpSocketBase trace sources carry RTTs, and what they carry: run the peer's dumbbell
# (1 NewReno flow, 10 Mb/s, 60-packet buffer, 8 s) and record both from 3 s on.
tid = ns.TypeId.LookupByName("ns3::TcpSocketBase")
names = []
for i in range(tid.GetTraceSourceN()):
    info = tid.GetTraceSource(i)
    if str(info.name) in ("RTT", "LastRTT"):
        names.append(str(info.name))
        print("trace source", info.name, ":", info.help)
cppyy.cppdef(r"""
namespace chk {
struct Rec {
  uint64_t n = 0; double lo = 1e9, hi = 0, absd = 0, last = -1; std::vector<double> first;
  void Hit(ns3::Time, ns3::Time v) {
    double x = v.GetSeconds() * 1000; ++n; lo = std::min(lo, x); hi = std::max(hi, x);
    if (last >= 0) absd += std::fabs(x - last); last = x; if (first.size() < 12) first.push_back(x);
  }
};
void Hook(std::string name, Rec* r) {
  ns3::Config::ConnectWithoutContextFailSafe("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/" + name,
                                             ns3::MakeCallback(&Rec::Hit, r));
}
void Later(std::string name, Rec* r) { ns3::Simulator::Schedule(ns3::Seconds(3), &Hook, name, r); }
}
""")
# 4. A TcpVegas that tallies PktsAcked's RTT argument.
cppyy.cppdef(r"""
namespace spy {
struct Tally { uint64_t calls = 0, eqLast = 0, eqSrtt = 0, nonzero = 0; };
Tally tally;
class SpyVegas : public ns3::TcpVegas {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("ns3::SpyVegas").SetParent<ns3::TcpVegas>().SetGroupName("Internet").AddConstructor<SpyVegas>();
    return tid;
  }
  SpyVegas() : ns3::TcpVegas() {}
  SpyVegas(const SpyVegas& o) : ns3::TcpVegas(o) {}
  void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t n, const ns3::Time& rtt) override {
    if (!rtt.IsZero()) {
      ++tally.nonzero;
      if (rtt == tcb->m_lastRtt.Get()) ++tally.eqLast;
      if (rtt == tcb->m_srtt.Get()) ++tally.eqSrtt;
    }
    ++tally.calls;
    ns3::TcpVegas::PktsAcked(tcb, n, rtt);
  }
  ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<SpyVegas>(this); }
};
void Register() { SpyVegas::GetTypeId(); }
}
""")
# 3 and 4 in one run (the peer script defines its helpers once per process): 2 SpyVegas flows,
# 10 Mb/s, 60-packet buffer, 8 s; the RTT traces of flow 0's socket from 3 s on.
import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402

cppyy.gbl.spy.Register()
spec = importlib.util.spec_from_file_location("peer", PEER)
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
recs = {}
for n in names:
    recs[n] = cppyy.gbl.chk.Rec()
    cppyy.gbl.chk.Later(n, recs[n])
with contextlib.redirect_stdout(io.StringIO()):
    peer.main(
        [
            "--flows",
            "2",
            "--variant",
            "SpyVegas",
            "--bottleneck-mbps",
            "10",
            "--queue-pkts",
            "60",
            "--sim-seconds",
            "8",
            "--warmup-seconds",
            "1",
        ]
    )
for n, r in recs.items():
    print(
        f"trace {n}: {r.n} values, {r.lo:.2f}-{r.hi:.2f} ms, mean |change| {r.absd / max(r.n - 1, 1):.3f} ms, first {[round(x, 2) for x in r.first]}"
    )
t = cppyy.gbl.spy.tally
print(
    f"PktsAcked calls {t.calls}, with an RTT {t.nonzero}: equal to m_lastRtt (the sample) {t.eqLast}, equal to m_srtt (smoothed) {t.eqSrtt}"
)
