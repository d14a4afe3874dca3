#!/usr/bin/env python3
"""ns-3.44's 802.11b/g link as the reference for tcpsim's Wi-Fi link (issue 18).

    python simulator/validation/ns3_wifi_reference.py --dry-run        # the matrix and each run's RSS
    python simulator/validation/ns3_wifi_reference.py --matrix         # ns-3 side, one run at a time
    .venv-ns3/bin/python simulator/validation/ns3_wifi_reference.py --run --standard 11g \
        --rate ErpOfdmRate54Mbps --snr-db 20 --traffic tcp              # one run: one JSON line

One AP and N stations in infrastructure mode (every node hears every other: a FixedRssLossModel
gives every frame the same received power, so there are no hidden nodes), no wired side. Traffic
is a bulk TCP NewReno transfer (BulkSend -> PacketSink, MSS 1448 with timestamps = 1500-byte IP
packets) or saturating UDP (1472-byte payloads = 1500-byte IP packets, offered above the PHY
rate), downlink (AP -> each station) or uplink (each station -> AP).

What is set (everything else is ns-3.44's default; docs/validation/wifi-ns3.md lists both):
* WifiHelper::SetStandard(80211b | 80211g); YansWifiPhy on a YansWifiChannel with
  ConstantSpeedPropagationDelayModel and FixedRssLossModel(Rss = SNR + noise, see noise_dbm,
  over the 20 MHz ns-3 uses for 11b frames as well as 11g's);
  RxNoiseFigure 7 dB (ns-3's default, set explicitly); TxGain = RxGain = 0 dB (defaults).
* NistErrorRateModel (for DSSS/HR-DSSS rates every ns-3 ErrorRateModel, NIST included, calls
  DsssErrorRateModel). The preamble detection model is removed (WifiPhyHelper's default
  ThresholdPreambleDetectionModel drops every frame below 4 dB SNR or -82 dBm RSS, which would
  cut 11b's error region off at -82 dBm); RxSensitivity stays at -101 dBm. CcaSensitivity is set
  to -101 dBm too (ns-3's default -82 dBm leaves the medium idle for a frame received below
  -82 dBm, so nodes transmit over each other's frames: at 6 Mb/s, 5 dB the station's frames were
  retried 33 % of the time instead of 7 %); --cca-sensitivity-dbm -82 restores the default.
* ConstantRateWifiManager: DataMode = the rate under test; ControlMode = the standard's lowest
  mandatory rate (DsssRate1Mbps / ErpOfdmRate6Mbps), used by RTS/CTS only (off). The ACK's rate
  is ns-3's control-answer rule (the highest basic rate not above the data rate, same modulation
  class), measured from the trace and reported as `ack_mode`.
* QosSupported = false on AP and stations: plain DCF (Txop with AIFSN 2 = DIFS, CWmin 31 for
  11b / 15 for 11g, CWmax 1023), no A-MPDU/A-MSDU (non-HT anyway), RTS/CTS off (the
  RtsCtsThreshold default 4692 B is above any frame here), no fragmentation.
* WifiMac FrameRetryLimit 7 (the default, dot11ShortRetryLimit, set explicitly).
* 11b: long PLCP preamble (WifiPhy ShortPlcpPreambleSupported false, the default).
  11g: short slot 9 us (ns-3's default: ShortSlotTimeSupported true on AP and stations and no
  non-ERP station) unless --long-slot; ERP protection unused (no non-ERP station).
* The traffic-control layer's FqCoDel is uninstalled; the only buffer is the WifiMacQueue,
  MaxSize --queue-pkts packets, MaxDelay 10 s (so only the size limit drops: ns-3's 500 ms
  lifetime would drop packets at 1-2 Mb/s).
* TCP: TcpNewReno, SegmentSize 1448, SndBuf/RcvBuf 4 MiB, DelAckCount --delack-count (ns-3's
  default 2; DelAckTimeout 200 ms), SACK and timestamps on (defaults), InitialCwnd 10.

Measured in the window [warmup, sim-seconds] by C++ trace sinks (nothing Python runs inside the
event loop): receiver goodput; from each transmitter's PhyTxPsduBegin, data frames sent, split
into first attempts and retries (the Retry bit), ACK frames and their mode; WifiRemoteStation
Manager MacTxDataFailed (an attempt not acknowledged) and MacTxFinalDataFailed (a frame given up
at the retry limit), WifiMac DroppedMpdu by reason, AckedMpdu, the MAC queue's DropBeforeEnqueue
(a full queue); TCP data segments sent and sent
again (a sequence number below the highest already sent, at the sender's IP layer). The timing
facts (slot, SIFS, AIFSN, CWmin/CWmax, the data frame's and the ACK's airtime) are read from the
objects after the run. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "simulator" / "bench"))
import bench  # noqa: E402  (ns-3 venv discovery and the measured runner)

REFERENCE = HERE / "results" / "ns3-wifi-reference.json"

BOLTZMANN = 1.3803e-23  # J/K, InterferenceHelper::CalculateSnr's constant (not CODATA's 1.380649e-23)
NOISE_FIGURE_DB = 7.0  # WifiPhy::RxNoiseFigure default
IP_PACKET_BYTES = 1500
TCP_MSS = 1448  # + 20 TCP + 12 timestamp option + 20 IP = 1500
UDP_PAYLOAD = 1472  # + 8 UDP + 20 IP = 1500
# MSDU = IP packet + 8 LLC/SNAP; MPDU = MSDU + 24 (non-QoS data header) + 4 FCS.
MPDU_OVERHEAD = 8 + 24 + 4
ACK_BYTES = 14

STANDARDS = {
    "11b": {
        "ns3": "WIFI_STANDARD_80211b",
        # The width ns-3.44 computes the noise over: a DSSS PPDU is 22 MHz wide (DsssPhy), but
        # InterferenceHelper logs "bandwidth=20MHz" for every 11b frame received here (with
        # NS_LOG=InterferenceHelper=level_all), so snr_db is the SNR ns-3 applies.
        "noise_width_mhz": 20,
        "control_mode": "DsssRate1Mbps",
        "rates": {"DsssRate1Mbps": 1, "DsssRate2Mbps": 2, "DsssRate5_5Mbps": 5.5, "DsssRate11Mbps": 11},
    },
    "11g": {
        "ns3": "WIFI_STANDARD_80211g",
        "noise_width_mhz": 20,  # ERP-OFDM, 20 MHz channel
        "control_mode": "ErpOfdmRate6Mbps",
        "rates": {f"ErpOfdmRate{r}Mbps": r for r in (6, 9, 12, 18, 24, 36, 48, 54)},
    },
}

# SNR points (dB) per rate: from no loss down through the error region (FER ~0 -> ~0.5+),
# placed from NIST's curves (--model-fer: the data frame's FER goes 0.01 -> 0.95 within ~2 dB).
SNR_POINTS = {
    "DsssRate11Mbps": [10, 8, 7.5, 7, 6.5, 6, 5.75],
    "ErpOfdmRate54Mbps": [30, 24, 23, 22.75, 22.5, 22.25, 22],
    "ErpOfdmRate24Mbps": [25, 14.5, 14, 13.75, 13.5, 13.25, 13, 12.75],
    "ErpOfdmRate6Mbps": [15, 5, 4.5, 4, 3.75, 3.5, 3.25],
}
CONTENTION_STATIONS = [2, 4]
HIGH_SNR_DB = 30


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


def standard_of(rate: str) -> str:
    return next(s for s, d in STANDARDS.items() if rate in d["rates"])


def noise_dbm(width_mhz: float, noise_figure_db: float = NOISE_FIGURE_DB) -> float:
    """ns-3's noise floor: k T (290 K) times the bandwidth, times the noise figure, in dBm
    (InterferenceHelper::CalculateSnr; -174 dBm/Hz + 10 log10(B) + NF up to k's rounding)."""
    return 10 * math.log10(BOLTZMANN * 290 * width_mhz * 1e6) + 30 + noise_figure_db


def rss_for_snr(snr_db: float, width_mhz: float, noise_figure_db: float = NOISE_FIGURE_DB) -> float:
    return snr_db + noise_dbm(width_mhz, noise_figure_db)


def key_of(case: dict) -> str:
    return f"{case['rate']}-snr{case['snr_db']:g}-{case['traffic']}-{case['stations']}sta-{case['direction']}"


def matrix() -> list[dict]:
    """The issue's cross-check runs: 1 station downlink, TCP and UDP, over each rate's SNR points;
    then 54 Mb/s at high SNR with 2 and 4 stations uploading (contention), TCP and UDP."""
    cases = [
        {"rate": rate, "snr_db": snr, "traffic": traffic, "stations": 1, "direction": "down"}
        for rate, snrs in SNR_POINTS.items()
        for snr in snrs
        for traffic in ("tcp", "udp")
    ]
    cases += [
        {"rate": "ErpOfdmRate54Mbps", "snr_db": HIGH_SNR_DB, "traffic": traffic, "stations": n, "direction": "up"}
        for n in CONTENTION_STATIONS
        for traffic in ("tcp", "udp")
    ]
    for c in cases:
        c["key"] = key_of(c)
    return cases


def ofdm_airtime_us(psdu_bytes: int, mbps: float, signal_extension_us: float = 6) -> float:
    """ERP-OFDM PPDU airtime: 16 us preamble + 4 us SIGNAL + 4 us symbols carrying the 16 SERVICE
    bits, the PSDU and 6 tail bits, plus the 2.4 GHz signal extension (802.11-2016 17.3.2.4,
    18.3.2.4; ns-3 OfdmPhy / ErpOfdmPhy)."""
    ndbps = mbps * 4
    return 16 + 4 + 4 * math.ceil((16 + 8 * psdu_bytes + 6) / ndbps) + signal_extension_us


def dsss_airtime_us(psdu_bytes: int, mbps: float, short_preamble: bool = False) -> float:
    """DSSS/HR-DSSS PPDU airtime: long PLCP 144 us preamble + 48 us header at 1 Mb/s (short:
    72 + 24 us), then the PSDU at the data rate, rounded up to a whole microsecond (ns-3 DsssPhy)."""
    plcp = 96 if short_preamble and mbps > 1 else 192
    return plcp + math.ceil(8 * psdu_bytes / mbps)


def dcf_bound_mbps(timing: dict, payload_bytes: int, data_us: float, ack_us: float) -> float:
    """One saturated station, no losses, no collisions: each frame costs DIFS + the mean backoff
    (CWmin / 2 slots) + the data frame + SIFS + the ACK. Payload bits over that time."""
    difs = timing["sifs_us"] + timing["aifsn"] * timing["slot_us"]
    cycle = difs + timing["cw_min"] / 2 * timing["slot_us"] + data_us + timing["sifs_us"] + ack_us
    return 8 * payload_bytes / cycle


# --------------------------------------------------------------------------- the ns-3 run

CPP = r"""
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>
namespace wifiref {
using namespace ns3;
struct Side {  // the frames one role (the AP, or the stations together) transmitted in the window
  uint64_t dataFirst = 0, dataRetry = 0, acks = 0, other = 0, txFailed = 0, finalFailed = 0, acked = 0, queueDrops = 0;
  std::map<int, uint64_t> dropped;  // WifiMacDropReason -> MPDUs
};
struct Meter {
  double from = 0, to = 1e300;
  Side sides[2];  // 0: AP, 1: stations
  std::string ackMode, dataMode, preamble;
  uint32_t dataSize = 0;
  Time dataAirtime, ackAirtime;
  uint64_t tcpData = 0, tcpRetx = 0;
  std::map<uint64_t, SequenceNumber32> highest;  // per TCP flow (source address and port): highest seq sent
  bool In() const { double t = Simulator::Now().GetSeconds(); return t >= from && t < to; }
};
Meter g;
struct SideSink {
  int side; Ptr<WifiPhy> phy;
  void Psdu(WifiConstPsduMap m, WifiTxVector v, double) {
    for (auto& kv : m) {
      const WifiMacHeader& h = kv.second->GetHeader(0);
      if (h.IsData()) {
        if (g.In() && kv.second->GetSize() > g.dataSize) {  // the largest data frame in the window
          g.dataMode = v.GetMode().GetUniqueName(); g.dataSize = kv.second->GetSize();
          g.dataAirtime = phy->CalculateTxDuration(kv.second->GetSize(), v, phy->GetPhyBand());
          g.preamble = v.GetPreambleType() == WIFI_PREAMBLE_SHORT ? "short" : "long";
        }
        if (!g.In()) continue;
        (h.IsRetry() ? g.sides[side].dataRetry : g.sides[side].dataFirst)++;
      } else if (h.IsAck()) {
        if (g.In() && g.ackMode.empty()) {  // an ACK in the window (not one for association)
          g.ackMode = v.GetMode().GetUniqueName();
          g.ackAirtime = phy->CalculateTxDuration(kv.second->GetSize(), v, phy->GetPhyBand());
        }
        if (g.In()) g.sides[side].acks++;
      } else if (g.In()) g.sides[side].other++;
    }
  }
  void Failed(Mac48Address) { if (g.In()) g.sides[side].txFailed++; }
  void Final(Mac48Address) { if (g.In()) g.sides[side].finalFailed++; }
  void Acked(Ptr<const WifiMpdu>) { if (g.In()) g.sides[side].acked++; }
  void Dropped(WifiMacDropReason r, Ptr<const WifiMpdu>) { if (g.In()) g.sides[side].dropped[(int)r]++; }
  void QueueFull(Ptr<const WifiMpdu>) { if (g.In()) g.sides[side].queueDrops++; }
};
std::vector<SideSink*> sinks;
void IpTx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t) {
  Ptr<Packet> c = p->Copy();
  Ipv4Header ip; c->RemoveHeader(ip);
  if (ip.GetProtocol() != 6) return;
  TcpHeader t; c->PeekHeader(t);
  if (c->GetSize() <= t.GetSerializedSize()) return;  // no payload: a pure ACK
  uint64_t flow = ((uint64_t)ip.GetSource().Get() << 16) | t.GetSourcePort();  // every node's first port is 49153
  auto it = g.highest.find(flow);
  bool again = it != g.highest.end() && t.GetSequenceNumber() < it->second;
  if (it == g.highest.end() || t.GetSequenceNumber() > it->second) g.highest[flow] = t.GetSequenceNumber();
  if (g.In()) { g.tcpData++; if (again) g.tcpRetx++; }
}

struct Net {
  NodeContainer ap, stas;
  NetDeviceContainer apDev, staDev;
  ApplicationContainer sinkApps;
  Ipv4InterfaceContainer apIf, staIf;
};
Net net;

std::string Build(std::string standard, std::string rate, std::string controlMode, double rss, double nf,
                  uint32_t nSta, bool longSlot, uint32_t queuePkts, uint32_t retryLimit, double ccaDbm) {
  net.ap.Create(1); net.stas.Create(nSta);
  YansWifiChannelHelper ch;
  ch.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel");
  ch.AddPropagationLoss("ns3::FixedRssLossModel", "Rss", DoubleValue(rss));
  YansWifiPhyHelper phy;
  phy.SetChannel(ch.Create());
  phy.SetErrorRateModel("ns3::NistErrorRateModel");
  phy.DisablePreambleDetectionModel();
  phy.Set("RxNoiseFigure", DoubleValue(nf));
  phy.Set("CcaSensitivity", DoubleValue(ccaDbm));
  WifiHelper wifi;
  wifi.SetStandard(standard == "11b" ? WIFI_STANDARD_80211b : WIFI_STANDARD_80211g);
  wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", StringValue(rate),
                               "ControlMode", StringValue(controlMode));
  WifiMacHelper mac;
  Ssid ssid("tcplab");
  mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid), "ActiveProbing", BooleanValue(false),
              "QosSupported", BooleanValue(false), "ShortSlotTimeSupported", BooleanValue(!longSlot),
              "FrameRetryLimit", UintegerValue(retryLimit));
  net.staDev = wifi.Install(phy, mac, net.stas);
  mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid), "QosSupported", BooleanValue(false),
              "ShortSlotTimeSupported", BooleanValue(!longSlot), "FrameRetryLimit", UintegerValue(retryLimit));
  net.apDev = wifi.Install(phy, mac, net.ap);
  MobilityHelper mob;
  mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
  mob.Install(net.ap); mob.Install(net.stas);
  InternetStackHelper inet;
  inet.Install(net.ap); inet.Install(net.stas);
  Ipv4AddressHelper addr("10.1.1.0", "255.255.255.0");
  net.apIf = addr.Assign(net.apDev);
  net.staIf = addr.Assign(net.staDev);
  TrafficControlHelper tch;
  tch.Uninstall(net.apDev); tch.Uninstall(net.staDev);
  // The MAC queue: only its size limit drops (non-QoS: the Txop's queue).
  NetDeviceContainer all(net.apDev, net.staDev);
  for (uint32_t i = 0; i < all.GetN(); ++i) {
    Ptr<WifiNetDevice> d = DynamicCast<WifiNetDevice>(all.Get(i));
    Ptr<WifiMacQueue> q = d->GetMac()->GetTxop()->GetWifiMacQueue();
    q->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, queuePkts));
    q->SetAttribute("MaxDelay", TimeValue(Seconds(10)));
    SideSink* s = new SideSink{i == 0 ? 0 : 1, d->GetPhy()};
    sinks.push_back(s);
    bool ok = d->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin", MakeCallback(&SideSink::Psdu, s));
    ok &= d->GetRemoteStationManager()->TraceConnectWithoutContext("MacTxDataFailed", MakeCallback(&SideSink::Failed, s));
    ok &= d->GetRemoteStationManager()->TraceConnectWithoutContext("MacTxFinalDataFailed", MakeCallback(&SideSink::Final, s));
    ok &= d->GetMac()->TraceConnectWithoutContext("AckedMpdu", MakeCallback(&SideSink::Acked, s));
    ok &= d->GetMac()->TraceConnectWithoutContext("DroppedMpdu", MakeCallback(&SideSink::Dropped, s));
    ok &= q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&SideSink::QueueFull, s));
    if (!ok) return "a trace source did not connect";
  }
  return "";
}

void Traffic(bool tcp, bool down, double start, double stop, uint32_t udpPayload, double udpMbps) {
  uint16_t port = 5000;
  for (uint32_t i = 0; i < net.stas.GetN(); ++i, ++port) {
    Ptr<Node> src = down ? net.ap.Get(0) : net.stas.Get(i);
    Ptr<Node> dst = down ? net.stas.Get(i) : net.ap.Get(0);
    Ipv4Address dstIp = down ? net.staIf.GetAddress(i) : net.apIf.GetAddress(0);
    std::string factory = tcp ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory";
    PacketSinkHelper sink(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
    net.sinkApps.Add(sink.Install(dst));
    ApplicationContainer a;
    if (tcp) {
      BulkSendHelper b(factory, InetSocketAddress(dstIp, port));
      b.SetAttribute("MaxBytes", UintegerValue(0));
      a = b.Install(src);
    } else {
      OnOffHelper o(factory, InetSocketAddress(dstIp, port));
      o.SetConstantRate(DataRate((uint64_t)(udpMbps * 1e6)), udpPayload);
      a = o.Install(src);
    }
    a.Start(Seconds(start + 0.01 * i)); a.Stop(Seconds(stop));
  }
  net.sinkApps.Start(Seconds(0.0));
  for (uint32_t n = 0; n < NodeList::GetNNodes(); ++n)
    NodeList::GetNode(n)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("Tx", MakeCallback(&IpTx));
}

std::vector<uint64_t> SinkBytes() {
  std::vector<uint64_t> v;
  for (uint32_t i = 0; i < net.sinkApps.GetN(); ++i) v.push_back(DynamicCast<PacketSink>(net.sinkApps.Get(i))->GetTotalRx());
  return v;
}

std::string SideJson(const Side& s) {
  std::ostringstream o;
  o << "{\"data_first\": " << s.dataFirst << ", \"data_retries\": " << s.dataRetry << ", \"acks_sent\": " << s.acks
    << ", \"other_frames\": " << s.other << ", \"mac_tx_data_failed\": " << s.txFailed
    << ", \"mac_tx_final_data_failed\": " << s.finalFailed << ", \"acked_mpdus\": " << s.acked << ", \"queue_drops\": " << s.queueDrops << ", \"dropped_mpdus\": {";
  bool first = true;
  for (auto& kv : s.dropped) { o << (first ? "" : ", ") << "\"" << kv.first << "\": " << kv.second; first = false; }
  o << "}}";
  return o.str();
}

std::string Default(std::string type, std::string name) {  // an attribute's initial value
  TypeId::AttributeInformation info;
  if (!TypeId::LookupByName(type).LookupAttributeByName(name, &info)) return "?";
  return info.initialValue->SerializeToString(info.checker);
}

std::string Facts() {  // read after the run: what the AP's MAC and PHY ran with
  Ptr<WifiNetDevice> d = DynamicCast<WifiNetDevice>(net.apDev.Get(0));
  Ptr<WifiNetDevice> s = DynamicCast<WifiNetDevice>(net.staDev.Get(0));
  Ptr<Txop> t = d->GetMac()->GetTxop();
  std::ostringstream o;
  o << "{\"slot_us\": " << d->GetPhy()->GetSlot().GetMicroSeconds()
    << ", \"sifs_us\": " << d->GetPhy()->GetSifs().GetMicroSeconds()
    << ", \"pifs_us\": " << d->GetPhy()->GetPifs().GetMicroSeconds()
    << ", \"sta_slot_us\": " << s->GetPhy()->GetSlot().GetMicroSeconds()
    << ", \"aifsn\": " << +t->GetAifsn() << ", \"cw_min\": " << t->GetMinCw() << ", \"cw_max\": " << t->GetMaxCw()
    << ", \"frame_retry_limit\": " << d->GetMac()->GetFrameRetryLimit()
    << ", \"qos\": " << (d->GetMac()->GetQosSupported() ? "true" : "false")
    << ", \"rx_sensitivity_dbm\": " << d->GetPhy()->GetRxSensitivity()
    << ", \"channel_width_mhz\": " << d->GetPhy()->GetChannelWidth()
    << ", \"data_mode\": \"" << g.dataMode << "\", \"data_psdu_bytes\": " << g.dataSize
    << ", \"data_airtime_us\": " << g.dataAirtime.GetNanoSeconds() / 1e3
    << ", \"ack_mode\": \"" << g.ackMode << "\", \"ack_airtime_us\": " << g.ackAirtime.GetNanoSeconds() / 1e3
    << ", \"preamble\": \"" << g.preamble << "\""
    << ", \"default_rts_cts_threshold\": " << Default("ns3::WifiRemoteStationManager", "RtsCtsThreshold")
    << ", \"default_rx_noise_figure_db\": " << Default("ns3::WifiPhy", "RxNoiseFigure")
    << ", \"default_short_plcp_preamble\": \"" << Default("ns3::WifiPhy", "ShortPlcpPreambleSupported") << "\""
    << ", \"mac_queue_max\": \"" << t->GetWifiMacQueue()->GetMaxSize() << "\"}";
  return o.str();
}
// A frame's success probability from ns-3's own error-rate model at a fixed SNR (no interference):
// the PHY header field (NON_HT_HEADER: DSSS 48 us at 1 Mb/s, long preamble; ERP-OFDM's 4 us SIGNAL
// at 6 Mb/s) times the payload (the PPDU after preamble + header, at the data rate), each chunk
// nbits = rate x duration, as InterferenceHelper computes them.
double FrameSuccess(std::string model, std::string modeName, uint32_t bytes, double snrDb) {
  ObjectFactory f; f.SetTypeId(model);
  Ptr<ErrorRateModel> m = f.Create<ErrorRateModel>();
  WifiMode mode(modeName);
  bool dsss = mode.GetModulationClass() == WIFI_MOD_CLASS_DSSS || mode.GetModulationClass() == WIFI_MOD_CLASS_HR_DSSS;
  WifiTxVector v;
  v.SetMode(mode); v.SetPreambleType(WIFI_PREAMBLE_LONG); v.SetChannelWidth(MHz_u{dsss ? 22.0 : 20.0});
  v.SetNss(1); v.SetNTx(1);
  double snr = std::pow(10.0, snrDb / 10.0);
  WifiMode hdr(dsss ? "DsssRate1Mbps" : "ErpOfdmRate6Mbps");
  Time hdrDur = MicroSeconds(dsss ? 48 : 4);
  Time payload = WifiPhy::CalculateTxDuration(bytes, v, WIFI_PHY_BAND_2_4GHZ) - WifiPhy::CalculatePhyPreambleAndHeaderDuration(v);
  uint64_t hb = (uint64_t)(hdr.GetDataRate(v.GetChannelWidth()) * hdrDur.GetSeconds());
  uint64_t pb = (uint64_t)(mode.GetDataRate(v.GetChannelWidth()) * payload.GetSeconds());
  return m->GetChunkSuccessRate(hdr, v, snr, hb, 1, WIFI_PPDU_FIELD_NON_HT_HEADER) *
         m->GetChunkSuccessRate(mode, v, snr, pb, 1, WIFI_PPDU_FIELD_DATA);
}
}  // namespace wifiref
"""

MODELS = ["ns3::NistErrorRateModel", "ns3::YansErrorRateModel", "ns3::TableBasedErrorRateModel"]
ACK_MODE = {  # measured: ns-3's control-answer rate for each data rate (the runs' facts.ack_mode)
    "DsssRate11Mbps": "DsssRate2Mbps", "ErpOfdmRate54Mbps": "ErpOfdmRate24Mbps",
    "ErpOfdmRate24Mbps": "ErpOfdmRate24Mbps", "ErpOfdmRate6Mbps": "ErpOfdmRate6Mbps",
}  # fmt: skip
FER_GRID_DB = [x / 4 for x in range(-8, 121)]  # -2 .. 30 dB


def model_fer() -> dict:
    """Per rate of the matrix and per error-rate model: the data frame's (1536-byte MPDU) and the
    ACK's (14 bytes at its control-answer rate) error rate over FER_GRID_DB, from ns-3's models."""
    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415, F401  (loads the ns-3 libraries and headers)

    cppyy.cppdef(CPP)
    fs = cppyy.gbl.wifiref.FrameSuccess
    out: dict = {
        "snr_db": FER_GRID_DB,
        "data_bytes": IP_PACKET_BYTES + MPDU_OVERHEAD,
        "ack_bytes": ACK_BYTES,
        "rates": {},
    }
    for rate, ack in ACK_MODE.items():
        out["rates"][rate] = {
            m: {
                "data_fer": [1 - fs(m, rate, IP_PACKET_BYTES + MPDU_OVERHEAD, x) for x in FER_GRID_DB],
                "ack_fer": [1 - fs(m, ack, ACK_BYTES, x) for x in FER_GRID_DB],
                "ack_mode": ack,
            }
            for m in MODELS
        }
    return out


def parse_run_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="One ns-3.44 802.11b/g run (or the matrix).")
    p.add_argument("--run", action="store_true", help="one ns-3 run in this Python (needs the ns3 package)")
    p.add_argument("--matrix", action="store_true", help="run the matrix (or what the reference lacks), one at a time")
    p.add_argument("--dry-run", action="store_true", help="print the matrix with each run's RSS")
    p.add_argument("--markdown", action="store_true", help="print the stored runs as Markdown tables")
    p.add_argument("--model-fer", action="store_true", help="store ns-3's frame error rates over SNR (needs ns3)")
    p.add_argument("--rerun", action="store_true", help="with --matrix: run even what the reference holds")
    p.add_argument("--only", default="", help="with --matrix: run keys containing this text")
    p.add_argument("--reference", default=str(REFERENCE))
    p.add_argument("--ns3-python", help="Python with the ns3 package (default .venv-ns3/bin/python at the repo root)")
    p.add_argument("--install-ns3", action="store_true", help="create .venv-ns3 with pip if it is missing (~2 min)")
    p.add_argument("--rate", default="ErpOfdmRate54Mbps", help="the DataMode (its standard follows)")
    p.add_argument("--snr-db", type=float, default=30.0)
    p.add_argument("--noise-figure-db", type=float, default=NOISE_FIGURE_DB)
    p.add_argument("--traffic", choices=["tcp", "udp"], default="tcp")
    p.add_argument("--stations", type=int, default=1)
    p.add_argument("--direction", choices=["down", "up"], default="down")
    p.add_argument("--sim-seconds", type=float, default=17.0)
    p.add_argument("--warmup-seconds", type=float, default=2.0)
    p.add_argument("--long-slot", action="store_true", help="11g: 20 us slot (ns-3's default is the short 9 us)")
    p.add_argument("--queue-pkts", type=int, default=100, help="WifiMacQueue MaxSize")
    p.add_argument("--retry-limit", type=int, default=7, help="WifiMac FrameRetryLimit")
    p.add_argument("--delack-count", type=int, default=2, help="TcpSocket DelAckCount (ns-3 default 2)")
    p.add_argument("--udp-offered-mbps", type=float, default=0, help="0: 1.5 x the PHY rate per station")
    p.add_argument(
        "--cca-sensitivity-dbm", type=float, default=-101.0, help="WifiPhy CcaSensitivity (ns-3 default -82)"
    )
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    if a.rate not in {r for d in STANDARDS.values() for r in d["rates"]}:
        p.error(f"--rate: unknown {a.rate}; choose from {', '.join(r for d in STANDARDS.values() for r in d['rates'])}")
    if a.stations < 1:
        p.error("--stations must be at least 1")
    return a


def run_ns3(a: argparse.Namespace) -> dict:
    """One run in this process (imports ns-3: about 10 s before anything runs)."""
    t0 = time.perf_counter()
    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415

    cppyy.cppdef(CPP)
    w = cppyy.gbl.wifiref
    std = standard_of(a.rate)
    spec = STANDARDS[std]
    rss = rss_for_snr(a.snr_db, spec["noise_width_mhz"], a.noise_figure_db)
    ns.RngSeedManager.SetSeed(a.seed)
    ns.RngSeedManager.SetRun(1)
    SD = ns.Config.SetDefault
    SD("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    SD("ns3::TcpSocket::SegmentSize", ns.UintegerValue(TCP_MSS))
    SD("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 << 20))
    SD("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 << 20))
    SD("ns3::TcpSocket::DelAckCount", ns.UintegerValue(a.delack_count))
    err = str(
        w.Build(std, a.rate, spec["control_mode"], rss, a.noise_figure_db, a.stations, a.long_slot,
                a.queue_pkts, a.retry_limit, a.cca_sensitivity_dbm)
    )  # fmt: skip
    if err:
        raise RuntimeError(err)
    start = 1.0  # association (beacons every 102.4 ms) is done well before this
    offered = a.udp_offered_mbps or 1.5 * spec["rates"][a.rate]
    w.Traffic(a.traffic == "tcp", a.direction == "down", start, a.sim_seconds, UDP_PAYLOAD, offered)
    import_s = time.perf_counter() - t0
    setattr(w.g, "from", a.warmup_seconds + start)
    w.g.to = a.sim_seconds
    t1 = time.perf_counter()
    ns.Simulator.Stop(ns.Seconds(a.warmup_seconds + start))
    ns.Simulator.Run()
    before = list(w.SinkBytes())
    ns.Simulator.Stop(ns.Seconds(a.sim_seconds - a.warmup_seconds - start))
    ns.Simulator.Run()
    after = list(w.SinkBytes())
    run_wall = time.perf_counter() - t1
    window = a.sim_seconds - a.warmup_seconds - start
    per = [8 * (y - x) / window / 1e6 for x, y in zip(before, after, strict=True)]
    facts = json.loads(str(w.Facts()))
    sides = {"ap": json.loads(str(w.SideJson(w.g.sides[0]))), "stations": json.loads(str(w.SideJson(w.g.sides[1])))}
    events = ns.Simulator.GetEventCount()
    ns.Simulator.Destroy()
    return {
        "standard": std,
        "rate": a.rate,
        "snr_db": a.snr_db,
        "rss_dbm": rss,
        "noise_dbm": noise_dbm(spec["noise_width_mhz"], a.noise_figure_db),
        "noise_width_mhz": spec["noise_width_mhz"],
        "traffic": a.traffic,
        "stations": a.stations,
        "direction": a.direction,
        "seed": a.seed,
        "sim_seconds": a.sim_seconds,
        "window_s": [a.warmup_seconds + start, a.sim_seconds],
        "udp_offered_mbps_per_station": offered if a.traffic == "udp" else None,
        "delack_count": a.delack_count,
        "cca_sensitivity_dbm": a.cca_sensitivity_dbm,
        "queue_pkts": a.queue_pkts,
        "goodput_mbps": sum(per),
        "per_station_goodput_mbps": per,
        "mac": sides,
        "tcp_data_segments": int(w.g.tcpData),
        "tcp_retransmissions": int(w.g.tcpRetx),
        "facts": facts,
        "control_mode": spec["control_mode"],
        "events": int(events),
        "import_s": import_s,
        "run_wall_s": run_wall,
    }


def summarize(raw: dict) -> dict:
    """The figures compared with tcpsim: the transmitting side's data frames and their fate."""
    tx = raw["mac"]["ap" if raw["direction"] == "down" else "stations"]
    attempts = tx["data_first"] + tx["data_retries"]
    return {
        "goodput_mbps": raw["goodput_mbps"],
        "data_frames": attempts,
        "first_attempts": tx["data_first"],
        "mac_retries": tx["data_retries"],
        "retry_fraction": tx["data_retries"] / attempts if attempts else None,
        # An attempt's failure probability: every failure is a retry, except the last of a frame
        # given up at the limit (so at high loss the retry fraction is below it).
        "failure_fraction": tx["mac_tx_data_failed"] / attempts if attempts else None,
        "mac_tx_data_failed": tx["mac_tx_data_failed"],
        "retry_limit_drops": tx["mac_tx_final_data_failed"],
        "queue_drops": tx["queue_drops"],
        "tcp_retransmissions": raw["tcp_retransmissions"] if raw["traffic"] == "tcp" else None,
    }


# --------------------------------------------------------------------------- the matrix


def run_args(case: dict) -> list[str]:
    return [
        "--run", "--rate", case["rate"], "--snr-db", f"{case['snr_db']:g}", "--traffic", case["traffic"],
        "--stations", str(case["stations"]), "--direction", case["direction"],
    ]  # fmt: skip


def load_reference(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text())
    return {
        "about": "ns-3.44 side of issue 18's Wi-Fi cross-check (simulator/validation/ns3_wifi_reference.py)",
        "runs": {},
    }


def save_reference(path: Path, ref: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


def run_matrix(a: argparse.Namespace) -> int:
    py, _, msg = bench.find_ns3(
        argparse.Namespace(no_ns3=False, ns3_script=__file__, ns3_python=a.ns3_python, install_ns3=a.install_ns3)
    )
    log(f"ns3_wifi_reference: {msg}")
    if py is None:
        return 1
    ref_path = Path(a.reference)
    ref = load_reference(ref_path)
    todo = [c for c in matrix() if a.only in c["key"] and (a.rerun or c["key"] not in ref["runs"])]
    log(f"ns3_wifi_reference: {len(todo)} run(s), one at a time")
    for c in todo:
        cmd = ["nice", "-n", "10", str(py), str(Path(__file__).resolve()), *run_args(c)]
        p = bench.run_measured(cmd, cwd=HERE, timeout=1200)
        if p.rc != 0 or p.timed_out:
            log(f"ns3_wifi_reference: {c['key']} FAILED (exit {p.rc}): {bench.tail(p.err, 8)}")
            continue
        raw = json.loads([x for x in p.out.splitlines() if x.startswith("{")][-1])
        ref["runs"][c["key"]] = {
            "case": c,
            "command": cmd[3:],
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "process_wall_s": p.wall_s,
            "summary": summarize(raw),
            "raw": raw,
        }
        ref["machine"] = bench.machine_info()
        ref["ns3"] = bench.ns3_version_in(py)
        save_reference(ref_path, ref)
        s = ref["runs"][c["key"]]["summary"]
        log(
            f"ns3_wifi_reference: {c['key']}: {s['goodput_mbps']:.3f} Mb/s, {s['data_frames']} frames, "
            f"{s['mac_retries']} retries, {s['retry_limit_drops']} dropped at the limit ({p.wall_s:.0f} s)"
        )
    return 0


def fer_at(ref: dict, rate: str, snr_db: float, model: str = MODELS[0]) -> tuple[float, float]:
    """The stored model FER (data, ACK) at an SNR, interpolated linearly over FER_GRID_DB."""
    m, grid = ref["model_fer"]["rates"][rate][model], ref["model_fer"]["snr_db"]
    k = max(i for i, x in enumerate(grid) if x <= snr_db)
    if grid[k] == snr_db:
        return m["data_fer"][k], m["ack_fer"][k]
    w = (snr_db - grid[k]) / (grid[k + 1] - grid[k])
    return tuple(
        a + w * (b - a) for a, b in ((m["data_fer"][k], m["data_fer"][k + 1]), (m["ack_fer"][k], m["ack_fer"][k + 1]))
    )


def exchange_failure(ref: dict, rate: str, snr_db: float) -> float:
    """NIST's probability that a DCF exchange fails at this SNR: the data frame or its ACK lost."""
    data, ack = fer_at(ref, rate, snr_db)
    return 1 - (1 - data) * (1 - ack)


def snr_at_fer(ref: dict, rate: str, model: str, fer: float = 0.5) -> float | None:
    """The SNR (dB) where the stored data-frame FER curve crosses `fer`, interpolated; None if never."""
    grid, curve = ref["model_fer"]["snr_db"], ref["model_fer"]["rates"][rate][model]["data_fer"]
    for k in range(len(grid) - 1):
        if curve[k] >= fer > curve[k + 1]:
            return grid[k] + (curve[k] - fer) / (curve[k] - curve[k + 1]) * (grid[k + 1] - grid[k])
    return None


def bound_rows(ref: dict) -> list[str]:
    """Each rate's DCF bound (dcf_bound_mbps) beside ns-3's UDP goodput at its highest SNR."""
    out = [
        "| rate | DIFS us | mean backoff us | data us | SIFS us | ACK us | cycle us | bound Mb/s | ns-3 UDP Mb/s | ns-3 / bound |",
        "|" + "---|" * 10,
    ]
    for rate, snrs in SNR_POINTS.items():
        raw = ref["runs"][
            key_of({"rate": rate, "snr_db": snrs[0], "traffic": "udp", "stations": 1, "direction": "down"})
        ]["raw"]
        f = raw["facts"]
        difs = f["sifs_us"] + f["aifsn"] * f["slot_us"]
        backoff = f["cw_min"] / 2 * f["slot_us"]
        cycle = difs + backoff + f["data_airtime_us"] + f["sifs_us"] + f["ack_airtime_us"]
        bound = dcf_bound_mbps(f, UDP_PAYLOAD, f["data_airtime_us"], f["ack_airtime_us"])
        out.append(
            f"| {rate} | {difs:g} | {backoff:g} | {f['data_airtime_us']:g} | {f['sifs_us']} | {f['ack_airtime_us']:g} "
            f"| {cycle:g} | {bound:.3f} | {raw['goodput_mbps']:.3f} | {raw['goodput_mbps'] / bound:.4f} |"
        )
    return out


def fer50_rows(ref: dict) -> list[str]:
    out = ["| rate | " + " | ".join(MODELS) + " |", "|" + "---|" * (1 + len(MODELS))]
    for rate in ACK_MODE:
        cells = [snr_at_fer(ref, rate, m) for m in MODELS]
        out.append(f"| {rate} | " + " | ".join("-" if c is None else f"{c:.2f} dB" for c in cells) + " |")
    return out


def markdown_tables(ref: dict) -> str:
    """The stored runs: one station per rate over SNR (TCP and UDP side by side), then contention."""
    out = [
        "DCF bound at the highest SNR:\n",
        *bound_rows(ref),
        "\nSNR of FER 0.5, 1536-byte frame:\n",
        *fer50_rows(ref),
    ]
    for rate, snrs in SNR_POINTS.items():
        out += [
            f"\n{rate} (ACK {ACK_MODE[rate]}), 1 station, downlink:\n",
            "| SNR dB | RSS dBm | NIST P(data or ACK lost) | UDP failed attempts (fraction) | UDP goodput Mb/s | UDP frames | UDP retries (fraction) | UDP limit drops "
            "| TCP goodput Mb/s | TCP frames | TCP retries (fraction) | TCP limit drops | TCP retx | station's frames / retries |",
            "|" + "---|" * 14,
        ]
        for snr in snrs:
            u = ref["runs"][key_of({"rate": rate, "snr_db": snr, "traffic": "udp", "stations": 1, "direction": "down"})]
            t = ref["runs"][key_of({"rate": rate, "snr_db": snr, "traffic": "tcp", "stations": 1, "direction": "down"})]
            us, ts, sta = u["summary"], t["summary"], t["raw"]["mac"]["stations"]
            out.append(
                f"| {snr:g} | {u['raw']['rss_dbm']:.2f} | {exchange_failure(ref, rate, snr):.3f} "
                f"| {us['mac_tx_data_failed']} ({us['failure_fraction']:.3f}) | {us['goodput_mbps']:.3f} | {us['data_frames']} "
                f"| {us['mac_retries']} ({us['retry_fraction']:.3f}) "
                f"| {us['retry_limit_drops']} | {ts['goodput_mbps']:.3f} | {ts['data_frames']} "
                f"| {ts['mac_retries']} ({ts['retry_fraction']:.3f}) | {ts['retry_limit_drops']} | {ts['tcp_retransmissions']} "
                f"| {sta['data_first'] + sta['data_retries']} / {sta['data_retries']} |"
            )
    out += [
        f"\nErpOfdmRate54Mbps, SNR {HIGH_SNR_DB} dB, N stations uploading to the AP:\n",
        "| stations | traffic | goodput Mb/s | per station | frames | retries (fraction) | limit drops | TCP retx |",
        "|" + "---|" * 8,
    ]
    for n in CONTENTION_STATIONS:
        for traffic in ("udp", "tcp"):
            r = ref["runs"][
                key_of(
                    {
                        "rate": "ErpOfdmRate54Mbps",
                        "snr_db": HIGH_SNR_DB,
                        "traffic": traffic,
                        "stations": n,
                        "direction": "up",
                    }
                )
            ]
            s = r["summary"]
            per = ", ".join(f"{x:.2f}" for x in r["raw"]["per_station_goodput_mbps"])
            out.append(
                f"| {n} | {traffic} | {s['goodput_mbps']:.3f} | {per} | {s['data_frames']} "
                f"| {s['mac_retries']} ({s['retry_fraction']:.3f}) | {s['retry_limit_drops']} | {s['tcp_retransmissions'] if s['tcp_retransmissions'] is not None else '-'} |"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    a = parse_run_args(argv)
    if a.dry_run:
        for c in matrix():
            w = STANDARDS[standard_of(c["rate"])]["noise_width_mhz"]
            print(f"{c['key']}: RSS {rss_for_snr(c['snr_db'], w):.2f} dBm (noise {noise_dbm(w):.2f} dBm over {w} MHz)")
        return 0
    if a.matrix:
        return run_matrix(a)
    if a.markdown:
        print(markdown_tables(load_reference(Path(a.reference))))
        return 0
    if a.model_fer:
        ref = load_reference(Path(a.reference))
        ref["model_fer"] = model_fer()
        save_reference(Path(a.reference), ref)
        for rate, ms in ref["model_fer"]["rates"].items():
            fer = ms[MODELS[0]]["data_fer"]
            marks = [f"{x:g}:{f:.2f}" for x, f in zip(FER_GRID_DB, fer, strict=True) if 0.005 < f < 0.995]
            log(f"{rate} NIST data FER {' '.join(marks)}")
        # ns-3's static teardown aborts when no simulation ran (a Time "registered 0 times");
        # the JSON is written, so leave without it.
        sys.stderr.flush()
        os._exit(0)
    if a.run:
        print(json.dumps(run_ns3(a)), flush=True)
        return 0
    log("nothing to do: --run, --matrix or --dry-run")
    return 2


if __name__ == "__main__":
    sys.exit(main())
