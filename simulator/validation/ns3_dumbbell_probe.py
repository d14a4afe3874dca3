#!/usr/bin/env python3
"""Runs the ns-3 peer's dumbbell.py with two additions the cross-check needs.

Run it with the ns-3 venv's Python (it imports `ns`); ns3_crosscheck.py does:

    .venv-ns3/bin/python simulator/validation/ns3_dumbbell_probe.py \
        --peer-script ../shared/peers/ns3/dumbbell.py [--set ns3::TcpCubic::HyStart=false ...] \
        -- <dumbbell.py options>

1. `--set NAME=VALUE` applies `Config::SetDefault` before the peer script sets its own
   defaults (which it never touches for these: e.g. `ns3::TcpCubic::HyStart`,
   `ns3::TcpVegas::Alpha`). Values are typed by their spelling: true/false, an integer, a
   float, else a string.
2. Measurements in the window: a time-averaged queue length: a C++ sink on the bottleneck device queue's
   `PacketsInQueue` (L's DropTailQueue<Packet>, the slowest point-to-point device; the packet
   being serialised is not in it, as in tcpsim's `mean_queue_pkts`) integrates the length
   over the measurement window [warmup, sim-seconds]. Nothing Python runs inside the event
   loop.

The peer script (read-only, beside the repository) is run unchanged: its `main()` is called
with the options after `--`, its one JSON line is captured, and this script prints it again
with `mean_queue_pkts`, `max_queue_pkts`, `timeouts_window`, `fast_recoveries_window` (entries
into CA_LOSS and CA_RECOVERY of any TCP socket in the window), `retransmissions_window` (data
segments sent again in the window), `sockets_traced` and `config_defaults` added. The sockets are
connected as they appear, from t = 0, so the counts are right whatever the warm-up (with
`--warmup-seconds 0` too).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys


def typed(value: str):
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        k = argv.index("--")
        own, peer_args = argv[:k], argv[k + 1 :]
    else:
        own, peer_args = argv, []
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--peer-script", required=True)
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    a = p.parse_args(own)

    spec = importlib.util.spec_from_file_location("ns3_peer_dumbbell", a.peer_script)
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    pa = peer.parse_args(peer_args)  # validates the options before the slow import

    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415 (8-25 s: cling parses the ns-3 headers)

    applied = {}
    for item in a.set:
        name, _, raw = item.partition("=")
        v = typed(raw)
        if isinstance(v, bool):
            val = ns.BooleanValue(v)
        elif isinstance(v, int):
            val = ns.UintegerValue(v)
        elif isinstance(v, float):
            val = ns.DoubleValue(v)
        else:
            val = ns.StringValue(v)
        ns.Config.SetDefault(name, val)
        applied[name] = v

    cppyy.cppdef(
        r"""
        #include <set>
        #include <vector>
        namespace xcheck {
        struct QueueMeter {
          double area = 0;      // packet-seconds since the window began
          double last = 0;      // time of the last change (s)
          uint32_t len = 0;     // current length
          uint32_t maxLen = 0;  // in the window
          double from = 0, to = 0;
          bool connected = false;
          void Changed(uint32_t, uint32_t now_len) {
            double t = ns3::Simulator::Now().GetSeconds();
            if (t > from) area += len * (t - std::max(last, from));
            last = t; len = now_len;
            if (t >= from && len > maxLen) maxLen = len;
          }
          void Open() { last = from; maxLen = len; area = 0; }
          void Close() {
            double t = ns3::Simulator::Now().GetSeconds();
            area += len * (t - std::max(last, from)); last = t; to = t;
          }
          double Mean() const { return to > from ? area / (to - from) : 0.0; }
        };
        // The bottleneck device on L: the slowest point-to-point device, on the lower node id.
        void Attach(QueueMeter* m) {
          ns3::Ptr<ns3::PointToPointNetDevice> best;
          uint64_t bestRate = 0;
          for (uint32_t i = 0; i < ns3::NodeList::GetNNodes(); ++i) {
            ns3::Ptr<ns3::Node> node = ns3::NodeList::GetNode(i);
            for (uint32_t d = 0; d < node->GetNDevices(); ++d) {
              auto p2p = ns3::DynamicCast<ns3::PointToPointNetDevice>(node->GetDevice(d));
              if (!p2p) continue;
              ns3::DataRateValue rate;
              p2p->GetAttribute("DataRate", rate);
              uint64_t r = rate.Get().GetBitRate();
              if (!best || r < bestRate) { best = p2p; bestRate = r; }
            }
          }
          if (best) {
            m->connected = best->GetQueue()->TraceConnectWithoutContext(
                "PacketsInQueue", ns3::MakeCallback(&QueueMeter::Changed, m));
          }
        }
        // Per-socket counts, in the window [from, to]: entries into CA_LOSS (a retransmission
        // timeout; not again on a backed-off repeat while still in CA_LOSS), entries into
        // CA_RECOVERY (a fast retransmit), and segments sent again (the socket's
        // "Retransmission" trace: every data segment whose tx-buffer item is marked
        // retransmitted, fast or after a timeout).
        // A socket exists only from its application's start (a sender) or from the SYN's arrival
        // (a forked receiver), and Config::Connect reaches only the sockets that exist when it is
        // called. So Poll looks for new sockets every millisecond until a second after the last
        // flow can start (no socket changes state within an RTT of its creation), every 100 ms
        // after that, and connects each new one once; the counters themselves ignore anything
        // before `from`. Connecting only at `from` (as this probe once did) missed every socket
        // created after it, e.g. all of them with a zero warm-up.
        struct StateCounter {
          uint64_t loss = 0, recovery = 0, retx = 0;
          double from = 0;
          std::set<const void*> seen;
          std::vector<ns3::Ptr<ns3::TcpSocketBase>> held;  // keeps `seen` free of reused addresses
          bool InWindow() const { return ns3::Simulator::Now().GetSeconds() >= from; }
          void Changed(ns3::TcpSocketState::TcpCongState_t was, ns3::TcpSocketState::TcpCongState_t now) {
            if (!InWindow()) return;
            if (now == ns3::TcpSocketState::CA_LOSS && was != ns3::TcpSocketState::CA_LOSS) ++loss;
            if (now == ns3::TcpSocketState::CA_RECOVERY && was != ns3::TcpSocketState::CA_RECOVERY) ++recovery;
          }
          void Retx(ns3::Ptr<const ns3::Packet>, const ns3::TcpHeader&, const ns3::Address&,
                    const ns3::Address&, ns3::Ptr<const ns3::TcpSocketBase>) {
            if (InWindow()) ++retx;
          }
        };
        void ConnectNewSockets(StateCounter* c) {
          for (uint32_t i = 0; i < ns3::NodeList::GetNNodes(); ++i) {
            ns3::Ptr<ns3::TcpL4Protocol> tcp = ns3::NodeList::GetNode(i)->GetObject<ns3::TcpL4Protocol>();
            if (!tcp) continue;
            ns3::ObjectVectorValue sockets;
            tcp->GetAttribute("SocketList", sockets);
            for (auto it = sockets.Begin(); it != sockets.End(); ++it) {
              ns3::Ptr<ns3::TcpSocketBase> s = ns3::DynamicCast<ns3::TcpSocketBase>(it->second);
              if (!s || !c->seen.insert(ns3::PeekPointer(s)).second) continue;
              c->held.push_back(s);
              s->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&StateCounter::Changed, c));
              s->TraceConnectWithoutContext("Retransmission", ns3::MakeCallback(&StateCounter::Retx, c));
            }
          }
        }
        void Poll(StateCounter* c, double fastUntil, double end) {
          ConnectNewSockets(c);
          double t = ns3::Simulator::Now().GetSeconds();
          double step = t < fastUntil ? 0.001 : 0.1;
          if (t + step < end) ns3::Simulator::Schedule(ns3::Seconds(step), &Poll, c, fastUntil, end);
        }
        void Arm(QueueMeter* m, StateCounter* c, double from, double to, double lastStart) {
          m->from = from;
          c->from = from;
          ns3::Simulator::Schedule(ns3::Seconds(0), &Attach, m);
          ns3::Simulator::Schedule(ns3::Seconds(0), &Poll, c, lastStart + 1.0, to);
          ns3::Simulator::Schedule(ns3::Seconds(from), &QueueMeter::Open, m);
          ns3::Simulator::Schedule(ns3::Seconds(to), &QueueMeter::Close, m);
        }
        }
        """
    )
    meter = cppyy.gbl.xcheck.QueueMeter()
    states = cppyy.gbl.xcheck.StateCounter()
    # Scheduled before the peer builds anything: the events run first at their times (t = 0,
    # the warm-up, the end), ahead of the peer's own Stop events at the same times.
    cppyy.gbl.xcheck.Arm(meter, states, float(pa.warmup_seconds), float(pa.sim_seconds), float(pa.start_spread_s))

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = peer.main(peer_args)
    if rc:
        sys.stderr.write(buf.getvalue())
        return rc
    line = [x for x in buf.getvalue().splitlines() if x.startswith("{")][-1]
    out = json.loads(line)
    out["mean_queue_pkts"] = round(float(meter.Mean()), 4) if meter.connected else None
    out["max_queue_pkts"] = int(meter.maxLen) if meter.connected else None
    out["timeouts_window"] = int(states.loss)
    out["fast_recoveries_window"] = int(states.recovery)
    out["retransmissions_window"] = int(states.retx)
    out["sockets_traced"] = len(states.held)
    out["config_defaults"] = applied
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
