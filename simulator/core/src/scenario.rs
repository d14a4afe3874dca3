//! The scenario format: the contract between researchers, the service and the core.
//!
//! One JSON document describes a whole run: `topology`, `flows`, `duration_s`, `warmup_s`,
//! `seed`, `outputs`, `limits`. Unknown fields are rejected (a typo must not silently fall back
//! to a default), and every error names the JSON path of the offending field. Defaults follow
//! ns-2 (what paper 000 used) unless a comment says otherwise; `docs/simulator.md` lists them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cc::{
    BbrParams, CubicParams, HyblaParams, LedbatParams, LpParams, PragueParams, PseudoRateParams, ScalableParams,
    SsdrParams, VegasParams, VenoParams, YeahParams,
};
use crate::error::{Result, SimError};

/// Hard caps that keep a single scenario from exhausting memory before it even starts.
pub const MAX_FLOWS: u64 = 100_000;
pub const MAX_NODES: usize = 100_000;
pub const MAX_TRACE_POINTS: u64 = 1_000_000;
pub const MAX_DURATION_S: f64 = 1.0e7;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text for people; ignored by the core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Simulated seconds; metrics cover [warmup_s, duration_s].
    pub duration_s: f64,
    #[serde(default)]
    pub warmup_s: f64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    #[serde(default)]
    pub outputs: Outputs,
    #[serde(default)]
    pub limits: Limits,
}

fn default_seed() -> u64 {
    1
}

// One per scenario, read once before a run: a dumbbell's size (its queues' parameters inline)
// costs nothing, so it is not boxed.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    Dumbbell(Dumbbell),
    Graph(Graph),
}

/// N sender/receiver pairs around one bottleneck. Each flow gets its own access links, whose
/// delays make up the flow's round-trip propagation delay (`rtt_ms`), as in paper 000 §IV-A.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    pub bottleneck: LinkParams,
    #[serde(default)]
    pub access: AccessParams,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    /// Required unless `trace` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// Delivery opportunities from a Mahimahi trace, in place of `rate_mbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// One-way propagation delay.
    pub delay_ms: f64,
    /// Rate and delay over time, both directions alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<LinkSchedule>,
    #[serde(default)]
    pub queue: QueueSpec,
    /// Loss module on the forward (left to right, data) direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    /// Loss module on the reverse (ACK) direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AccessParams {
    #[serde(default = "default_access_rate")]
    pub rate_mbps: f64,
    #[serde(default = "default_access_queue")]
    pub queue: QueueSpec,
}

fn default_access_rate() -> f64 {
    1000.0
}

fn default_access_queue() -> QueueSpec {
    QueueSpec::Droptail {
        limit_pkts: 1000,
        ecn_threshold_pkts: None,
    }
}

impl Default for AccessParams {
    fn default() -> Self {
        AccessParams {
            rate_mbps: default_access_rate(),
            queue: default_access_queue(),
        }
    }
}

/// An explicit graph: named nodes and duplex links (paper 002's six-node topology).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    pub nodes: Vec<String>,
    pub links: Vec<GraphLink>,
    /// 802.11 networks (issue 18): each joins an access point to its stations over one
    /// shared medium.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wifi: Vec<WifiSpec>,
}

/// One 802.11 BSS: an access point and its stations, graph nodes, sharing a medium under the
/// DCF (`net::wifi`). Each station gets two one-way links, `<name>-<station>` (from the AP)
/// and `<name>-<station>-rev` (to it), which routes cross like any other link.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WifiSpec {
    pub name: String,
    /// The access point's node.
    pub ap: String,
    pub stations: Vec<WifiStation>,
    pub standard: WifiStandard,
    /// The data rate of every data frame, one of the standard's: 802.11b 1, 2, 5.5 or 11;
    /// 802.11g 6, 9, 12, 18, 24, 36, 48 or 54. ACKs go at the highest basic rate not above it.
    pub rate_mbps: f64,
    /// Transmission attempts per frame before it is dropped (dot11ShortRetryLimit; ns-3's
    /// `FrameRetryLimit`).
    #[serde(default = "default_retry_limit")]
    pub retry_limit: u32,
    /// The contention window after a frame is dropped at the retry limit.
    #[serde(default)]
    pub cw_after_drop: CwAfterDrop,
    /// 802.11g only: 9 µs slots, as in a BSS of ERP stations only (false: 20 µs).
    #[serde(default = "default_true")]
    pub short_slot: bool,
    /// Each transmitter's (the AP's, each station's) queue: Drop-Tail, the frame in service
    /// counted. Default 500 packets, ns-3's `WifiMacQueue`.
    #[serde(default = "default_wifi_queue")]
    pub queue: QueueSpec,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WifiStation {
    pub node: String,
    /// The SNR of frames between this station and the AP (both ways), dB: a number or a
    /// schedule (a fade).
    pub snr_db: SnrSpec,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum SnrSpec {
    Fixed(f64),
    Schedule(ScheduleSpec),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WifiStandard {
    /// DSSS/HR-DSSS (Clauses 15, 16), long preamble.
    #[serde(rename = "802.11b")]
    B,
    /// ERP-OFDM (Clause 18), 2.4 GHz.
    #[serde(rename = "802.11g")]
    G,
}

/// What a drop at the retry limit does to the contention window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CwAfterDrop {
    /// Back to CWmin (IEEE 802.11-2016 §10.3.3: "when SSRC reaches dot11ShortRetryLimit").
    #[default]
    Reset,
    /// Kept (CWmax after 7 failures) for the next frame's backoff, reset at that frame's first
    /// failure: 802.11-2020 §10.23.2.2 read literally, as ns-3.44 (`Txop::UpdateFailedCw`).
    Keep,
}

fn default_retry_limit() -> u32 {
    7
}

fn default_wifi_queue() -> QueueSpec {
    QueueSpec::Droptail {
        limit_pkts: 500,
        ecn_threshold_pkts: None,
    }
}

/// SNRs a station may have, dB.
pub const SNR_DB_RANGE: (f64, f64) = (-30.0, 100.0);

impl WifiSpec {
    pub fn check(&self, c: &mut Check, path: &str) {
        if self.name.is_empty() {
            c.fail(format!("{path}.name"), "must not be empty");
        }
        if self.stations.is_empty() {
            c.fail(format!("{path}.stations"), "a Wi-Fi network needs at least one station");
        }
        for (i, s) in self.stations.iter().enumerate() {
            let p = format!("{path}.stations[{i}].snr_db");
            let (lo, hi) = SNR_DB_RANGE;
            match &s.snr_db {
                SnrSpec::Fixed(v) => {
                    if c.finite(&p, *v) && !(lo..=hi).contains(v) {
                        c.fail(
                            p,
                            format!("must be between {} and {}, got {}", show(lo), show(hi), show(*v)),
                        );
                    }
                }
                SnrSpec::Schedule(sch) => sch.check(c, &p, lo, hi),
            }
        }
        let p = format!("{path}.rate_mbps");
        if c.finite(&p, self.rate_mbps) && self.rate_kbps().is_none() {
            let rates: Vec<String> = self.standard.rates_mbps().iter().map(|r| show(*r)).collect();
            c.fail(
                p,
                format!(
                    "{} has no rate of {} Mb/s: one of {}",
                    self.standard.label(),
                    show(self.rate_mbps),
                    rates.join(", ")
                ),
            );
        }
        if self.retry_limit == 0 || self.retry_limit > 65_535 {
            c.fail(format!("{path}.retry_limit"), "must be between 1 and 65535 attempts");
        }
        match self.queue {
            QueueSpec::Droptail {
                limit_pkts,
                ecn_threshold_pkts: None,
            } => {
                if limit_pkts == 0 {
                    c.fail(format!("{path}.queue.limit_pkts"), "must be at least 1 packet");
                }
            }
            _ => c.fail(
                format!("{path}.queue"),
                "a Wi-Fi transmitter's queue is Drop-Tail (no ecn_threshold_pkts)",
            ),
        }
    }

    /// The data rate in kb/s, if it is one of the standard's.
    pub fn rate_kbps(&self) -> Option<u32> {
        let rates = self.standard.rates_mbps();
        rates
            .iter()
            .find(|&&r| r == self.rate_mbps)
            .map(|r| (r * 1000.0) as u32)
    }
}

impl WifiStandard {
    pub fn rates_mbps(self) -> &'static [f64] {
        match self {
            WifiStandard::B => &[1.0, 2.0, 5.5, 11.0],
            WifiStandard::G => &[6.0, 9.0, 12.0, 18.0, 24.0, 36.0, 48.0, 54.0],
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            WifiStandard::B => "802.11b",
            WifiStandard::G => "802.11g",
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    /// Defaults to "from-to".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub from: String,
    pub to: String,
    /// Required unless `trace` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// Delivery opportunities from a Mahimahi trace, in place of `rate_mbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    pub delay_ms: f64,
    /// Rate and delay over time, both directions alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<LinkSchedule>,
    #[serde(default)]
    pub queue: QueueSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossSpec>,
}

/// A trace-driven link (issue 18): Mahimahi trace files, one line per 1500-byte delivery
/// opportunity (the millisecond from the trace's start), looping at their end as mm-link's do.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// The forward (data) direction's trace: a path on the machine that runs the core.
    pub file: String,
    /// The reverse (ACK) direction's trace; defaults to `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_file: Option<String>,
}

/// A link whose rate or delay changes over time (issue 18: handover, route change, outage).
/// Both directions of the duplex link follow it (docs/simulator.md, "Links that change over
/// time").
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSchedule {
    /// The link's rate over time, Mb/s, in place of `rate_mbps` (refused with it, and with a
    /// trace). A packet's bits are served at the rate in force while it is sent; a rate of 0
    /// is a blackout in which packets wait. The last value must be above 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<ScheduleSpec>,
    /// Delay added to `delay_ms` over time, ms (a route change): a packet takes the delay in
    /// force when its transmission ends, and never overtakes the packet before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_delay_ms: Option<ScheduleSpec>,
}

/// A quantity that changes over time (issue 18; `crate::schedule`): `[seconds, value]`
/// points, times strictly increasing. The first value holds before the first point and the
/// last after the last; between points the value is held (`step`) or follows a straight
/// line (`linear`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSpec {
    pub points: Vec<[f64; 2]>,
    #[serde(default)]
    pub shape: ScheduleShape,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleShape {
    /// Each point's value holds until the next point: a handover, a route change, an outage.
    #[default]
    Step,
    /// Straight lines between points: a fade, a ramp.
    Linear,
}

/// RED's early-drop rules (`topology…queue.rules`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RedRules {
    /// Floyd & Jacobson 1993 §4, as Linux's sch_red: the average alone decides.
    #[default]
    FloydJacobson,
    /// ns-2.35's red.cc and ns-3's RedQueueDisc: no early drop (or mark) while at most one
    /// packet waits, and the first arrival with the average above min_th starts the count
    /// without a drop (`edv_.old`).
    Ns,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// FIFO that drops arrivals when `limit_pkts` packets wait (the one in service not counted).
    Droptail {
        limit_pkts: u32,
        /// DCTCP's marking threshold K (RFC 8257 §3.1): an ECN-capable arrival that finds this
        /// many packets or more waiting is marked CE (the instantaneous queue, no averaging);
        /// absent, no marking.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn_threshold_pkts: Option<u32>,
    },
    /// Random Early Detection, Floyd & Jacobson 1993. Thresholds default to 1/3 and 2/3 of the
    /// limit, as paper 000 §IV-A sets them.
    Red {
        limit_pkts: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_th_pkts: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_th_pkts: Option<f64>,
        #[serde(default = "default_red_max_p")]
        max_p: f64,
        #[serde(default = "default_red_weight")]
        weight: f64,
        #[serde(default = "default_true")]
        gentle: bool,
        /// Typical packet size, used to age the average across idle periods (F&J §4).
        #[serde(default = "default_red_mean_pkt")]
        mean_pkt_bytes: u32,
        /// RFC 3168 §5: an early drop becomes a CE mark for an ECN-capable packet, in the
        /// gentle region too (as ns-2's `setbit`); a full queue, or an average past max_th
        /// (2·max_th when gentle), still drops.
        #[serde(default)]
        ecn: bool,
        /// Whose early-drop rules: Floyd & Jacobson's (the default), or ns-2's and ns-3's, which
        /// never drop early while at most one packet waits and let the first arrival above
        /// min_th only start the count.
        #[serde(default)]
        rules: RedRules,
    },
    /// CoDel, RFC 8289: drops at dequeue once the sojourn time has stayed above `target_ms` for
    /// `interval_ms`, then interval/√count apart (`net/codel.rs`).
    Codel {
        /// Packets waiting beyond which arrivals are dropped (Linux's default 1000).
        #[serde(default = "default_aqm_limit")]
        limit_pkts: u32,
        /// RFC 8289 §4.3.
        #[serde(default = "default_codel_target_ms")]
        target_ms: f64,
        /// RFC 8289 §4.2.
        #[serde(default = "default_codel_interval_ms")]
        interval_ms: f64,
        /// Mark ECN-capable packets CE instead of dropping them at dequeue (RFC 8289 §5, Linux's
        /// `ecn`); overflow still drops.
        #[serde(default)]
        ecn: bool,
    },
    /// PIE, RFC 8033: early drops at enqueue with a probability a PI controller updates every
    /// `t_update_ms` from the queueing delay (`net/pie.rs`).
    Pie {
        /// Packets waiting beyond which arrivals are dropped (Linux's default 1000).
        #[serde(default = "default_aqm_limit")]
        limit_pkts: u32,
        /// QDELAY_REF, RFC 8033 §4.2.
        #[serde(default = "default_pie_ms")]
        target_ms: f64,
        /// T_UPDATE, §4.2.
        #[serde(default = "default_pie_ms")]
        t_update_ms: f64,
        /// α, 1/s (§4.2).
        #[serde(default = "default_pie_alpha")]
        alpha: f64,
        /// β, 1/s (§4.2).
        #[serde(default = "default_pie_beta")]
        beta: f64,
        /// MAX_BURST, §4.4.
        #[serde(default = "default_pie_max_burst_ms")]
        max_burst_ms: f64,
        /// §5.4's derandomization (off, as ns-3 and Linux).
        #[serde(default)]
        derandomize: bool,
        /// RFC 8033 §5.1: an early drop becomes a CE mark for an ECN-capable packet while the
        /// drop probability is below 10 %.
        #[serde(default)]
        ecn: bool,
    },
    /// FQ-CoDel, RFC 8290: per-flow queues under CoDel, deficit round robin (`net/fq_codel.rs`).
    FqCodel {
        /// Packets in all queues beyond which the fattest queue loses packets (§5.2.3).
        #[serde(default = "default_fq_codel_limit")]
        limit_pkts: u32,
        /// Flow queues (§5.2.5).
        #[serde(default = "default_fq_codel_flows")]
        flows: u32,
        /// Bytes per queue per round, packet sizes on the wire (§5.2.4).
        #[serde(default = "default_fq_codel_quantum")]
        quantum_bytes: u32,
        /// Each queue's CoDel (§5.2.2).
        #[serde(default = "default_codel_target_ms")]
        target_ms: f64,
        /// §5.2.1.
        #[serde(default = "default_codel_interval_ms")]
        interval_ms: f64,
        /// Each queue's CoDel marks ECN-capable packets instead of dropping them: on by default,
        /// as RFC 8290 §5.2.7 (and Linux) have it; a flow without `tcp.ecn` sends none.
        #[serde(default = "default_true")]
        ecn: bool,
    },
    /// DualPI2, RFC 9332's Dual-Queue Coupled AQM (`net/dualpi2.rs`): ECT(1) and CE packets
    /// (`tcp.l4s`) in a low-latency queue marked on a ramp at about a millisecond, the rest in a
    /// classic queue under PI2, the two coupled so both kinds get about the same rate. It always
    /// marks: ECN-capable classic packets are marked, not dropped, below p_Cmax.
    Dualpi2 {
        /// Packets in both queues beyond which arrivals are dropped (Linux's default 10,000).
        #[serde(default = "default_dualpi2_limit")]
        limit_pkts: u32,
        /// The classic queue's target sojourn time (RFC 9332 A.1).
        #[serde(default = "default_pie_ms")]
        target_ms: f64,
        /// The base probability's update period (A.1: min(target, RTT_max/3)).
        #[serde(default = "default_pie_ms")]
        t_update_ms: f64,
        /// PI integral gain, 1/s (A.1: 0.1·Tupdate/RTT_max², RTT_max = 100 ms).
        #[serde(default = "default_dualpi2_alpha")]
        alpha: f64,
        /// PI proportional gain, 1/s (A.1: 0.3/RTT_max).
        #[serde(default = "default_dualpi2_beta")]
        beta: f64,
        /// Coupling factor k: p_CL = k·p', p_C = p'² (§2.1).
        #[serde(default = "default_dualpi2_coupling")]
        coupling: f64,
        /// The low-latency queue's marking ramp starts at this sojourn time (A.1 minTh).
        #[serde(default = "default_dualpi2_ramp_min_ms")]
        ramp_min_ms: f64,
        /// ... and rises to certain marking over this much more (A.1 range); 0: a step.
        #[serde(default = "default_dualpi2_ramp_range_ms")]
        ramp_range_ms: f64,
        /// No ramp marking while this many low-latency packets or fewer wait (A.1 Th_len).
        #[serde(default = "default_dualpi2_ramp_min_pkts")]
        ramp_min_pkts: u32,
        /// The classic queue's share of the link while both queues wait (Linux's
        /// `classic_protection`); RFC 9332 §4.1 leaves the scheduler open.
        #[serde(default = "default_dualpi2_classic_weight")]
        classic_weight: f64,
    },
}

fn default_aqm_limit() -> u32 {
    1000
}
fn default_dualpi2_limit() -> u32 {
    10_000
}
fn default_dualpi2_alpha() -> f64 {
    0.15
}
fn default_dualpi2_beta() -> f64 {
    3.0
}
fn default_dualpi2_coupling() -> f64 {
    2.0
}
fn default_dualpi2_ramp_min_ms() -> f64 {
    0.8
}
fn default_dualpi2_ramp_range_ms() -> f64 {
    0.4
}
fn default_dualpi2_ramp_min_pkts() -> u32 {
    1
}
fn default_dualpi2_classic_weight() -> f64 {
    0.1
}
fn default_codel_target_ms() -> f64 {
    5.0
}
fn default_codel_interval_ms() -> f64 {
    100.0
}
fn default_pie_ms() -> f64 {
    15.0
}
fn default_pie_alpha() -> f64 {
    0.125
}
fn default_pie_beta() -> f64 {
    1.25
}
fn default_pie_max_burst_ms() -> f64 {
    150.0
}
fn default_fq_codel_limit() -> u32 {
    10_240
}
fn default_fq_codel_flows() -> u32 {
    1024
}
fn default_fq_codel_quantum() -> u32 {
    1514
}

fn default_red_max_p() -> f64 {
    0.1
}
fn default_red_weight() -> f64 {
    0.002
}
fn default_true() -> bool {
    true
}
fn default_red_mean_pkt() -> u32 {
    1000
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::Droptail {
            limit_pkts: 100,
            ecn_threshold_pkts: None,
        }
    }
}

/// How `bernoulli_events` spaces its loss events.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EventSpacing {
    /// Each counted packet starts an event with probability p: geometric gaps, mean 1/p.
    #[default]
    Random,
    /// An event every round(1/p) counted packets, from a random place in the first period:
    /// every cycle carries exactly 1/p packets, as paper 000's models assume (S = 1/p, eq. 3
    /// and 7); what reproduces its Fig. 2 errors in ns-2 and tcpsim alike
    /// (docs/validation/fig2-model-errors.md).
    Periodic,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    /// Each packet is lost independently with probability `rate`.
    Uniform { rate: f64 },
    /// Paper 000 §IV-B: each data packet starts a loss event with probability `p`; the event
    /// drops that packet and the next `m - 1` data packets of the same flow. Two details
    /// follow §III-A's model ("a loss event begins with the first loss in a round"; "within a
    /// fast recovery, retransmitted segments are never lost"): retransmissions pass untouched
    /// and do not count, and an event lasts at most one round, `event_span_s` (default: the
    /// flow's round-trip propagation delay). Without them an event longer than a small window
    /// goes on to eat the segments sent after the timeout it caused, one backed-off timeout
    /// after another: a stall the model excludes (see docs/validation/fig2.md).
    BernoulliEvents {
        p: f64,
        m: u32,
        #[serde(default = "default_true")]
        spare_retransmissions: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event_span_s: Option<f64>,
        /// Where events start: `random` (each packet with probability p) or `periodic`.
        #[serde(default)]
        spacing: EventSpacing,
    },
    /// Drops the listed data packets, counted 1, 2, 3, … in the order they reach the module
    /// (retransmissions count too). Paper 004's one- and two-loss cases.
    Scheduled { packets: Vec<u64> },
    /// Loses packets with probability `rate` between `start_s` and `end_s` (wireless fade).
    Outage {
        start_s: f64,
        end_s: f64,
        #[serde(default = "default_one")]
        rate: f64,
    },
    /// Loses each packet with the probability `rate` scheduled for the moment it reaches the
    /// module (a fade, a handover's loss burst).
    Schedule { rate: ScheduleSpec },
    /// Two-state Markov chain stepped once per packet.
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "default_one")]
        loss_bad: f64,
    },
}

fn default_one() -> f64 {
    1.0
}

/// A number, or a distribution to draw one per generated flow. A key beside `uniform` is refused,
/// as everywhere else in the format.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(untagged, deny_unknown_fields)]
pub enum Value {
    Fixed(f64),
    Uniform { uniform: [f64; 2] },
}

impl Value {
    pub fn bounds(&self) -> (f64, f64) {
        match *self {
            Value::Fixed(v) => (v, v),
            Value::Uniform { uniform: [a, b] } => (a, b),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    #[default]
    Tcp,
    Udp,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Defaults to "flow{i}"; generated flows are named "{name}-{k}".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Generates this many flows from one entry (background traffic).
    #[serde(default = "default_count")]
    pub count: u32,
    #[serde(rename = "type", default)]
    pub kind: FlowKind,
    /// TCP congestion-control variant; see `cc::VARIANTS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "variant_schema")]
    pub variant: Option<String>,
    /// Round-trip propagation delay (dumbbell only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<Value>,
    /// End nodes (graph only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    #[serde(default = "default_start")]
    pub start_s: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    #[serde(default)]
    pub app: AppSpec,
    #[serde(default)]
    pub tcp: TcpConfig,
    /// Loss module on this flow's path, just before its receiver (paper 000 §IV-B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
}

fn default_count() -> u32 {
    1
}
fn default_start() -> Value {
    Value::Fixed(0.0)
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// Bulk transfer: unlimited, or `bytes` with the download response time measured.
    Ftp {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
    },
    /// Constant bit rate over UDP.
    Cbr {
        rate_mbps: f64,
        #[serde(default = "default_cbr_packet")]
        packet_bytes: u32,
    },
    /// Paper 000 §IV-A: a request on the reverse path, a Pareto-sized response over TCP, an
    /// exponential think time, repeat.
    Http {
        #[serde(default = "default_http_mean")]
        mean_file_bytes: f64,
        #[serde(default = "default_http_shape")]
        shape: f64,
        #[serde(default = "default_http_think")]
        mean_think_s: f64,
        #[serde(default = "default_http_request")]
        request_bytes: u32,
        /// A request lost on the way is sent again after this long (like a SYN retry).
        #[serde(default = "default_http_request_timeout")]
        request_timeout_s: f64,
    },
}

fn default_cbr_packet() -> u32 {
    1000
}
fn default_http_mean() -> f64 {
    48_000.0
}
fn default_http_shape() -> f64 {
    1.2
}
fn default_http_think() -> f64 {
    0.5
}
fn default_http_request() -> u32 {
    100
}
fn default_http_request_timeout() -> f64 {
    3.0
}

impl Default for AppSpec {
    fn default() -> Self {
        AppSpec::Ftp { bytes: None }
    }
}

/// Per-flow TCP parameters. Defaults are ns-2.35's (`tcp-defaults.tcl`) where paper 000 relied
/// on them, not everywhere: the receiver window, limited transmit and the four ns-2 ways
/// (`limited_transmit_after_timeout`, `recover_guard`, `integer_ssthresh`,
/// `repeated_timeout_ssthresh`, `fack_recovery`, `recovery_keeps_half_window`,
/// `sack_recovery`) are not ns-2's (docs/simulator.md says which is whose; the
/// `ns2` profile sets them all).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// A reference's TCP defaults for every field the scenario leaves out (`TcpProfile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<TcpProfile>,
    pub mss_bytes: u32,
    /// TCP/IP header bytes added to every segment on the wire (an ACK is one header).
    pub header_bytes: u32,
    pub initial_cwnd_pkts: f64,
    /// Unlimited when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh_pkts: Option<f64>,
    /// Receiver window in segments: cwnd never lets more than this be outstanding.
    pub max_window_pkts: u32,
    pub delayed_ack: bool,
    pub delack_timeout_s: f64,
    /// SACK blocks on ACKs; on by default for the variants that recover with them (`sack`,
    /// `cubic`, `bbr`, `fack`, `rate-halving`; docs/simulator.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    pub dupack_threshold: u32,
    pub initial_rto_s: f64,
    pub min_rto_s: f64,
    pub max_rto_s: f64,
    /// RFC 6298 alpha (SRTT gain) and beta (RTTVAR gain) and K.
    pub rtt_gain: f64,
    pub rttvar_gain: f64,
    pub rttvar_k: f64,
    /// Clock granularity G of RFC 6298; the RTO is rounded up to a multiple of it.
    pub timer_granularity_s: f64,
    /// Where the RTO estimator's measurements come from.
    pub rtt_sampling: RttSampling,
    /// Pace every transmission at a rate derived from cwnd and SRTT, as Linux's TCP does under
    /// the fq qdisc (`tcp_update_pacing_rate`); absent, only variants with a pacing rate of
    /// their own (`bbr`) pace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing: Option<PacingParams>,
    /// HyStart++ (RFC 9406) for the first slow start of the variants that slow-start by RFC 5681
    /// (`cc/hystart.rs`); absent, slow start runs until the first loss.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hystart: Option<crate::cc::HystartParams>,
    /// ECN, RFC 3168: new data segments go out ECT(0), the receiver echoes CE marks with ECE
    /// until CWR, and the sender reduces its window once per window of data on ECE, as for a
    /// loss but without a retransmission (`tcp/sender.rs`, `CongestionControl::on_ecn_echo`).
    pub ecn: bool,
    /// New data goes out ECT(1), the L4S identifier (RFC 9331 §4.1), in place of ECT(0), and
    /// ECN is on as with `ecn`: a DualPI2 queue (RFC 9332) puts such packets in its low-latency
    /// queue. The congestion response is the variant's own: `dctcp` answers marks as RFC 9331
    /// §4.3 asks of a scalable control; a classic variant halves on them.
    pub l4s: bool,
    /// After a reduction for ECE the window does not grow until the window then in flight is
    /// acknowledged (the CWR state), as after a loss: Linux (`tcp_cong_control` calls
    /// `cong_avoid` only outside `tcp_in_cwnd_reduction`) and ns-3.44 (`TcpSocketBase` calls no
    /// `IncreaseWindow` in `CA_CWR`) both hold it; RFC 3168 §6.1.2 treats ECE "just as a
    /// congestion loss". Off (tcpsim's default, every existing result): the window keeps
    /// growing per ACK after the reduction. The ns-3 AQM cross-check sets it
    /// (docs/validation/ns3-aqm-crosscheck.md).
    pub ecn_reduction_holds_window: bool,
    /// RACK-TLP loss detection (RFC 8985, `tcp/rack.rs`) for the SACK recoveries (`sack_recovery`
    /// `rfc6675` or `prr`): a segment is lost when one sent after it is delivered and RACK.rtt +
    /// min_RTT/4 has passed since it was sent, not after DupThresh SACKs, and a tail loss probe
    /// two SRTTs after the last transmission replaces most tail timeouts. Off: DupThresh decides.
    pub rack: bool,
    /// The sender starts each connection with one RTT sample of its path's propagation round
    /// trip, as a host has from its SYN exchange (RFC 6298 §2.2's first measurement; Linux's
    /// `tcp_synack_rtt_meas`): the RTO and TLP's probe timeout start from it, not from
    /// `initial_rto_s`. tcpsim has no handshake, so without it a flow starts knowing no RTT.
    pub handshake_rtt: bool,
    /// The receiver acknowledges the first this many in-order segments of a connection at once,
    /// whatever `delayed_ack`: Linux's quick-ACK mode at a connection's start
    /// (`tcp_incr_quickack` on the first data, TCP_MAX_QUICKACKS 16), so slow start is not held
    /// back by delayed ACKs. 0: delayed ACKs from the first segment.
    pub quickack_pkts: u32,
    /// RFC 3042: send one new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Limited transmit also while go-back-N resends after a timeout, where each of the first
    /// two duplicate ACKs lets the next resend out early: ns-2.35's send_one() answers
    /// duplicate ACKs 1 and 2 in any state but fast recovery (tcp.cc, tcp-newreno.cc).
    pub limited_transmit_after_timeout: bool,
    /// What a new fast retransmit waits for after a fast recovery or a timeout.
    pub recover_guard: RecoverGuard,
    /// ssthresh rounded down to whole segments at every reduction, as ns-2.35 keeps it
    /// (`int ssthresh_`; `ssthresh_ = (int) halfwin` in TcpAgent::slowdown, tcp.cc).
    pub integer_ssthresh: bool,
    /// ssthresh when the same data times out again.
    pub repeated_timeout_ssthresh: RepeatedTimeoutSsthresh,
    /// How the `fack` variant recovers.
    pub fack_recovery: FackRecovery,
    /// After a fast recovery cwnd is the reduced window as computed, not ssthresh rounded down
    /// by `integer_ssthresh`: ns-2.35's slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF) sets
    /// `ssthresh_ = (int) halfwin` and `cwnd_ = halfwin` (tcp.cc), and Reno and NewReno leave
    /// recovery with that cwnd_ (tcp-reno.cc, tcp-newreno.cc). Linux keeps both whole.
    pub recovery_keeps_half_window: bool,
    /// How the variants that recover with SACK (`sack`, `cubic`, `bbr`) do it.
    pub sack_recovery: SackRecovery,
    /// Each variant's own knobs (`cc/<variant>.rs`), read only when the flow runs it.
    pub vegas: VegasParams,
    pub cubic: CubicParams,
    pub ssdr: SsdrParams,
    pub pseudo_rate: PseudoRateParams,
    pub scalable: ScalableParams,
    pub veno: VenoParams,
    pub hybla: HyblaParams,
    pub ledbat: LedbatParams,
    pub lp: LpParams,
    pub yeah: YeahParams,
    pub prague: PragueParams,
    /// BBRv1's parts beyond the draft's core (`cc/bbr.rs`); the defaults leave them out.
    pub bbr: BbrParams,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            profile: None,
            mss_bytes: 1000,
            header_bytes: 40,
            initial_cwnd_pkts: 2.0,
            initial_ssthresh_pkts: None,
            max_window_pkts: 100_000,
            delayed_ack: false,
            delack_timeout_s: 0.1,
            sack: None,
            dupack_threshold: 3,
            initial_rto_s: 3.0,
            min_rto_s: 0.2,
            max_rto_s: 60.0,
            rtt_gain: 0.125,
            rttvar_gain: 0.25,
            rttvar_k: 4.0,
            timer_granularity_s: 0.01,
            rtt_sampling: RttSampling::PerRtt,
            pacing: None,
            hystart: None,
            ecn: false,
            l4s: false,
            ecn_reduction_holds_window: false,
            rack: false,
            handshake_rtt: false,
            quickack_pkts: 0,
            limited_transmit: false,
            limited_transmit_after_timeout: false,
            recover_guard: RecoverGuard::AckReachesRecover,
            integer_ssthresh: false,
            repeated_timeout_ssthresh: RepeatedTimeoutSsthresh::Hold,
            fack_recovery: FackRecovery::Mathis,
            recovery_keeps_half_window: false,
            sack_recovery: SackRecovery::Rfc6675,
            vegas: VegasParams::default(),
            cubic: CubicParams::default(),
            ssdr: SsdrParams::default(),
            pseudo_rate: PseudoRateParams::default(),
            scalable: ScalableParams::default(),
            veno: VenoParams::default(),
            hybla: HyblaParams::default(),
            ledbat: LedbatParams::default(),
            lp: LpParams::default(),
            yeah: YeahParams::default(),
            prague: PragueParams::default(),
            bbr: BbrParams::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RttSampling {
    /// One segment timed per round trip, never a retransmitted one (Karn's rule): BSD and
    /// ns-2 without timestamps, what paper 000 simulated.
    PerRtt,
    /// Every ACK that advances the window, from its timestamp echo (RFC 7323 §4): what ns-3
    /// and Linux do with timestamps on; a retransmission's echo is unambiguous, so a sample
    /// after a timeout ends the backoff at once.
    Timestamps,
}

/// A simulator's or a host's TCP defaults, named on a flow's `tcp` (`"profile": "ns2"`): each
/// sets the fields below for that reference, and a field the scenario gives still wins. Fields
/// a profile does not name keep tcpsim's defaults; the variant is the flow's own choice.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TcpProfile {
    /// ns-2.35's `Agent/TCP` and `Agent/TCPSink` (ns-default.tcl, read from Debian's
    /// ns-2.35 binary), with ns-2's four ways of its own (docs/validation/ns2-crosscheck.md).
    /// ns-2's SYN round trip (`syn_` true) has no counterpart: tcpsim has no handshake.
    Ns2,
    /// ns-3.44's `TcpSocket`, `TcpSocketBase` and `RttMeanDeviation` attribute defaults (read
    /// from the ns-3.44 Python package): 536-byte segments, IW 10, 128 KiB receive buffer, an
    /// ACK per 2 segments or 200 ms, RTO 1 s initially and at least, 1 ms clock, timestamps,
    /// SACK, limited transmit. Header 54 bytes: IPv4 20 + TCP 20 + timestamps 12 + PPP 2.
    Ns3,
    /// A Linux 6.x host on Ethernet: MSS 1448 (1500 − 20 − 20 − 12 of timestamps), IW 10
    /// (TCP_INIT_CWND, RFC 6928), RTO 1 s initially (TCP_TIMEOUT_INIT), 200 ms at least
    /// (TCP_RTO_MIN), 120 s at most (TCP_RTO_MAX), delayed ACKs from 40 ms (TCP_ATO_MIN),
    /// SACK and timestamps on, a 6 MiB receive buffer (tcp_rmem), cwnd and ssthresh in whole
    /// packets, PRR, HyStart, RACK-TLP (`net.ipv4.tcp_recovery` 1 since Linux 4.18, which
    /// replaced the duplicate-ACK threshold; TLP by `tcp_early_retrans` 3), the SYN exchange's
    /// RTT sample and quick ACKs for a connection's first 16 segments, the window held in the
    /// CWR state after an ECE reduction, and CUBIC's Reno-friendly estimate as `bictcp_update`.
    Linux,
    /// Paper 004's OPNET Modeler table (its Table 1): initial window 1 MSS of 1460 bytes, a
    /// 65,535-byte receive buffer (44 segments), an ACK per 2 segments or 200 ms, RTO 1 s
    /// initially, 0.5 s at least, 64 s at most, 3 duplicate ACKs.
    Opnet,
}

impl TcpProfile {
    /// The fields this profile sets, as scenario JSON.
    pub fn settings(self) -> serde_json::Value {
        use serde_json::json;
        // No profile sets a variant's constants (`cubic`'s C and β, `ssdr`, `pseudo_rate`, `vegas`):
        // - CUBIC: ns-3's `TcpCubic` has C 0.4 and β 0.7 (`C`, `Beta`), tcpsim's defaults.
        //   Linux's tcp_cubic.c works in fixed point, β = 717/1024 = 0.7002 and C =
        //   bic_scale·10/1024 = 0.4004; a scenario matching it to the last digit sets them.
        //   Both keep α_cubic in the Reno-friendly estimate past cwnd_prior, where RFC 9438
        //   (tcpsim's default) goes to 1: `reno_friendly: "linux"` follows them, and the ns3
        //   and linux profiles set it.
        // - Vegas: ns-2's alpha 1, beta 3, gamma 1 are the defaults; ns-3's `TcpVegas` and
        //   Linux's tcp_vegas.c use alpha 2, beta 4, gamma 1. The profiles leave them at ns-2's
        //   so results of existing scenarios stay the same; set `vegas` to compare with those.
        // - SSDR and Pseudo-Rate are in neither ns-3 nor Linux.
        // BBR's switches are the exceptions (`bbr`, cc/bbr.rs), and Scalable's (`scalable`,
        // cc/scalable.rs): ns3 and linux set them as ns-3's TcpBbr and TcpScalable and Linux's
        // tcp_bbr.c and tcp_scalable.c have them; and Veno's (`veno`, cc/veno.rs), which ns3
        // sets as ns-3's TcpVeno grows (Linux's is tcpsim's default). No golden snapshot names
        // those profiles.
        let bbr = |p: crate::cc::BbrParams| serde_json::to_value(p).expect("BbrParams serialise");
        let scalable = serde_json::to_value(ScalableParams::ns3_and_linux()).expect("ScalableParams serialise");
        match self {
            TcpProfile::Ns2 => json!({
                "mss_bytes": 1000, "header_bytes": 40, "initial_cwnd_pkts": 2, "max_window_pkts": 20,
                "delayed_ack": false, "dupack_threshold": 3, "initial_rto_s": 3.0, "min_rto_s": 0.2,
                "max_rto_s": 60.0, "rtt_gain": 0.125, "rttvar_gain": 0.25, "rttvar_k": 4.0,
                "timer_granularity_s": 0.01, "rtt_sampling": "per_rtt", "limited_transmit": true,
                "limited_transmit_after_timeout": true, "recover_guard": "ack_passes_recover", "integer_ssthresh": true,
                "repeated_timeout_ssthresh": "halve", "fack_recovery": "ns2_fack",
                "recovery_keeps_half_window": true, "sack_recovery": "ns2_sack1"
            }),
            TcpProfile::Ns3 => json!({
                "mss_bytes": 536, "header_bytes": 54, "initial_cwnd_pkts": 10, "max_window_pkts": 244,
                "delayed_ack": true, "delack_timeout_s": 0.2, "sack": true, "dupack_threshold": 3,
                "initial_rto_s": 1.0, "min_rto_s": 1.0, "rtt_gain": 0.125, "rttvar_gain": 0.25,
                "rttvar_k": 4.0, "timer_granularity_s": 0.001, "rtt_sampling": "timestamps",
                "limited_transmit": true, "sack_recovery": "prr", "ecn_reduction_holds_window": true,
                "cubic": {"reno_friendly": "linux"},
                "bbr": bbr(crate::cc::BbrParams::ns3(536)), "scalable": scalable,
                "veno": {"reno_growth": true}
            }),
            TcpProfile::Linux => json!({
                "mss_bytes": 1448, "header_bytes": 52, "initial_cwnd_pkts": 10, "max_window_pkts": 4344,
                "delayed_ack": true, "delack_timeout_s": 0.04, "sack": true, "dupack_threshold": 3,
                "initial_rto_s": 1.0, "min_rto_s": 0.2, "max_rto_s": 120.0, "timer_granularity_s": 0.001,
                "rtt_sampling": "timestamps", "integer_ssthresh": true, "sack_recovery": "prr", "rack": true,
                "handshake_rtt": true, "quickack_pkts": 16, "ecn_reduction_holds_window": true,
                "cubic": {"reno_friendly": "linux"},
                "hystart": {"css_rounds": 0, "min_window_pkts": 16},
                "bbr": bbr(crate::cc::BbrParams::linux()), "scalable": scalable
            }),
            TcpProfile::Opnet => json!({
                "mss_bytes": 1460, "header_bytes": 40, "initial_cwnd_pkts": 1, "max_window_pkts": 44,
                "delayed_ack": true, "delack_timeout_s": 0.2, "dupack_threshold": 3,
                "initial_rto_s": 1.0, "min_rto_s": 0.5, "max_rto_s": 64.0, "rtt_gain": 0.125,
                "rttvar_gain": 0.25, "rttvar_k": 4.0
            }),
        }
    }

    pub const ALL: [TcpProfile; 4] = [TcpProfile::Ns2, TcpProfile::Ns3, TcpProfile::Linux, TcpProfile::Opnet];

    pub fn name(self) -> &'static str {
        match self {
            TcpProfile::Ns2 => "ns2",
            TcpProfile::Ns3 => "ns3",
            TcpProfile::Linux => "linux",
            TcpProfile::Opnet => "opnet",
        }
    }
}

/// Linux's pacing rate for window-based variants (net/ipv4/tcp_input.c, `tcp_update_pacing_rate`):
/// ratio × max(cwnd, segments in flight) / SRTT, with the slow-start ratio while cwnd is below
/// half of ssthresh and the congestion-avoidance ratio after. No pacing before the first RTT
/// sample (Linux's rate starts unlimited).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PacingParams {
    /// `net.ipv4.tcp_pacing_ss_ratio`, 200 %: room for slow start to double per round trip.
    pub ss_ratio: f64,
    /// `net.ipv4.tcp_pacing_ca_ratio`, 120 %.
    pub ca_ratio: f64,
}

/// Linux's default pacing ratios (`tcp_pacing_ss_ratio` 200 %, `tcp_pacing_ca_ratio` 120 %).
pub const LINUX_PACING: PacingParams = PacingParams {
    ss_ratio: 2.0,
    ca_ratio: 1.2,
};

impl Default for PacingParams {
    fn default() -> Self {
        LINUX_PACING
    }
}

impl PacingParams {
    /// Segments per second for this window and smoothed RTT.
    pub fn rate(&self, cwnd: f64, ssthresh: f64, flight: u32, srtt_s: f64) -> f64 {
        let ratio = if cwnd < ssthresh / 2.0 {
            self.ss_ratio
        } else {
            self.ca_ratio
        };
        ratio * cwnd.max(flight as f64) / srtt_s
    }
}

/// When duplicate ACKs may start a new fast retransmit after a recovery or a timeout, whose
/// `recover` is the highest segment sent then (RFC 6582 §3.2 step 2; RFC 6675 §5's
/// RecoveryPoint). It keeps the duplicate ACKs that go-back-N's needless resends draw from
/// starting a second recovery for the same loss.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoverGuard {
    /// Once the cumulative ACK covers everything up to `recover` (RFC 6582's "covers more
    /// than recover" with byte-numbered ACKs; RFC 6675's "HighACK >= RecoveryPoint"; Linux).
    AckReachesRecover,
    /// Only once it acknowledges a segment beyond `recover`: ns-2.35's `highest_ack_ >
    /// recover_` (dupack_action in tcp.cc, tcp-reno.cc, tcp-newreno.cc, tcp-sack1.cc), whose
    /// ACKs name the last segment received, so the same comparison asks one segment more.
    AckPassesRecover,
}

/// The `fack` variant's loss recovery.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FackRecovery {
    /// Mathis & Mahdavi 1996: cwnd = ssthresh when recovery starts, held until it ends.
    Mathis,
    /// ns-2.35's `Agent/TCP/Fack` (tcp-fack.cc): cwnd restarts from one segment and grows on
    /// every ACK of the recovery, and is kept at its end (`tcp/recovery/fack.rs`).
    Ns2Fack,
}

/// The loss recovery of the variants that recover with SACK (`sack`, `cubic`, `bbr`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SackRecovery {
    /// RFC 6675: pipe from the scoreboard (SetPipe), NextSeg, IsLost after DupThresh SACKs;
    /// cwnd = ssthresh as recovery begins.
    Rfc6675,
    /// ns-2.35's `Agent/TCP/Sack1` (tcp-sack1.cc): a pipe counter set at entry and moved by
    /// ACKs and sends, every hole below the highest SACK taken as lost (`tcp/recovery/sack1.rs`).
    Ns2Sack1,
    /// RFC 6675's detection and NextSeg with Proportional Rate Reduction (RFC 6937, PRR-SSRB)
    /// setting cwnd through the recovery (`tcp/recovery/prr.rs`): Linux's since 3.2 and ns-3's
    /// default (`TcpPrrRecovery`).
    Prr,
}

/// What a retransmission timeout does to ssthresh when the segment it resends was already
/// resent by the timer.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RepeatedTimeoutSsthresh {
    /// Held: RFC 5681 §3.1 sets it only when the segment "has not yet been resent by way of
    /// the retransmission timer" (Linux's tcp_enter_loss alike).
    Hold,
    /// Halved again from the one-segment window, so 2: ns-2.35's TcpAgent::timeout calls
    /// slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_RESTART) on every expiry (tcp.cc).
    Halve,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    Cwnd,
    Ssthresh,
    Queue,
    /// A flow's delivery rate at its receiver over each trace interval (`FlowTrace::throughput_bps`).
    Throughput,
    /// A flow's mean one-way delay over each trace interval (`FlowTrace::delay_s`).
    Delay,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Outputs {
    /// Sampling interval of the time series; no traces when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_interval_s: Option<f64>,
    pub trace: Vec<TraceKind>,
    /// Flow names to trace (default: every flow, subject to `max_trace_points`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_flows: Option<Vec<String>>,
    /// Link names to trace the queue of (default: the bottleneck, or every graph link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_links: Option<Vec<String>>,
    /// Upper bound on all trace samples together, so traces stay a bounded size.
    pub max_trace_points: u64,
}

impl Default for Outputs {
    fn default() -> Self {
        Outputs {
            trace_interval_s: None,
            trace: vec![TraceKind::Cwnd, TraceKind::Ssthresh, TraceKind::Queue],
            trace_flows: None,
            trace_links: None,
            max_trace_points: 200_000,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_wall_s: Option<f64>,
}

/// The scenario format as JSON Schema (draft 2020-12), generated from these serde types: the one
/// description of every field, enum and default that the service's Pydantic mirror
/// (`services/scenarios/schema.py`) is checked against and that editors can validate with.
/// Field checks across fields (`Scenario::check`) are not in it.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Scenario)).expect("a JSON Schema serialises")
}

/// A variant is a string in the format (so an unknown one gets the core's own message), but
/// its schema lists `cc::VARIANTS`.
fn variant_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = crate::cc::VARIANTS.iter().map(|(name, _)| *name).collect();
    schemars::json_schema!({ "type": ["string", "null"], "enum": names })
}

impl Scenario {
    /// Parses JSON text; the error names the JSON path of the first problem.
    pub fn from_json(text: &str) -> Result<Scenario> {
        // serde would also read a struct from a positional array; a scenario is an object.
        if !text.trim_start().starts_with('{') {
            let message = match serde_json::from_str::<serde_json::Value>(text) {
                Ok(v) => format!("a scenario is a JSON object, got {}", json_kind(&v)),
                Err(e) => format!("not valid JSON: {}", e),
            };
            return Err(SimError::Parse {
                path: "$".into(),
                message,
            });
        }
        let de = &mut serde_json::Deserializer::from_str(text);
        let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let message = e.into_inner().to_string();
            SimError::Parse {
                path: json_path(&path),
                message: strip_position(&message),
            }
        })?;
        if scenario.flows.iter().all(|f| f.tcp.profile.is_none()) {
            return Ok(scenario);
        }
        // Read once as written (every error names the scenario's own field); then again with
        // each profile's settings under the fields the flow left out.
        let mut value: serde_json::Value = serde_json::from_str(text).expect("parsed above");
        let mut rack_from_profile = vec![false; scenario.flows.len()];
        for ((flow, spec), rack) in value["flows"]
            .as_array_mut()
            .expect("flows parsed above")
            .iter_mut()
            .zip(&scenario.flows)
            .zip(&mut rack_from_profile)
        {
            let Some(profile) = spec.tcp.profile else { continue };
            let tcp = flow["tcp"].as_object_mut().expect("a profile is set in an object");
            *rack = !tcp.contains_key("rack");
            for (field, setting) in profile.settings().as_object().expect("settings are an object") {
                tcp.entry(field.clone()).or_insert_with(|| setting.clone());
            }
        }
        let mut scenario: Scenario = serde_json::from_value(value).map_err(|e| SimError::Parse {
            path: "$.flows".into(),
            message: format!("a TCP profile's settings do not fit: {e}"),
        })?;
        // A profile's RACK-TLP serves the variants that recover with SACK; the others keep their
        // own recovery (a scenario that asks for `rack` on one is refused, `plan.rs`).
        for (flow, from_profile) in scenario.flows.iter_mut().zip(rack_from_profile) {
            if from_profile && flow.tcp.rack && !crate::plan::recovers_with_sack(flow) {
                flow.tcp.rack = false;
            }
        }
        Ok(scenario)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serialises")
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// serde_path_to_error writes `flows[0].tcp`; we prefix `$` like JSONPath (`$` alone is the
/// root; `?` marks where the text ended before the path did).
fn json_path(path: &str) -> String {
    let path = path.trim_end_matches(".?").trim_end_matches('?');
    if path == "." || path.is_empty() {
        "$".to_string()
    } else {
        format!("$.{path}")
    }
}

/// serde_json appends " at line L column C"; the path already says where.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// A number as an error message shows it: short even when the input was absurdly long.
pub fn show(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e9 || v.abs() < 1e-6) {
        format!("{v:.3e}")
    } else {
        format!("{v}")
    }
}

/// Checks every value the types cannot: ranges, finiteness, names that must exist.
pub struct Check {
    errors: Vec<SimError>,
}

impl Check {
    pub fn new() -> Self {
        Check { errors: Vec::new() }
    }

    pub fn fail(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(SimError::invalid(path, message));
    }

    pub fn finite(&mut self, path: &str, v: f64) -> bool {
        if !v.is_finite() {
            self.fail(path, format!("must be a finite number, got {}", show(v)));
            return false;
        }
        true
    }

    pub fn positive(&mut self, path: &str, v: f64) {
        if self.finite(path, v) && v <= 0.0 {
            self.fail(path, format!("must be > 0, got {}", show(v)));
        }
    }

    pub fn non_negative(&mut self, path: &str, v: f64) {
        if self.finite(path, v) && v < 0.0 {
            self.fail(path, format!("must be >= 0, got {}", show(v)));
        }
    }

    pub fn probability(&mut self, path: &str, v: f64) {
        if self.finite(path, v) && !(0.0..=1.0).contains(&v) {
            self.fail(path, format!("must be a probability in [0, 1], got {}", show(v)));
        }
    }

    pub fn at_most(&mut self, path: &str, v: f64, max: f64) {
        if v.is_finite() && v > max {
            self.fail(path, format!("must be <= {}, got {}", show(max), show(v)));
        }
    }

    /// The first error found, or Ok.
    pub fn finish(self) -> Result<()> {
        match self.errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Default for Check {
    fn default() -> Self {
        Self::new()
    }
}

/// A link's rate or trace (exactly one of them) and its delay. The trace's files are read
/// when the network is built.
pub fn check_link_rate_delay(
    c: &mut Check,
    path: &str,
    rate_mbps: Option<f64>,
    trace: Option<&TraceSpec>,
    delay_ms: f64,
    schedule: Option<&LinkSchedule>,
) {
    let scheduled_rate = schedule.and_then(|s| s.rate_mbps.as_ref());
    if let Some(rate) = scheduled_rate {
        let at = format!("{path}.schedule.rate_mbps");
        rate.check(c, &at, 0.0, 1.0e7);
        if let Some(&[_, last]) = rate.points.last() {
            if last == 0.0 {
                let i = rate.points.len() - 1;
                c.fail(
                    format!("{at}.points[{i}][1]"),
                    "the last rate must be above 0: a link that never sends again would hold its packets forever",
                );
            }
        }
        if rate_mbps.is_some() {
            c.fail(
                at,
                "give rate_mbps or schedule.rate_mbps, not both: the schedule sets the link's rate",
            );
        } else if trace.is_some() {
            c.fail(
                at,
                "give a trace or schedule.rate_mbps, not both: each sets the link's rate",
            );
        }
    }
    if let Some(extra) = schedule.and_then(|s| s.extra_delay_ms.as_ref()) {
        extra.check(c, &format!("{path}.schedule.extra_delay_ms"), 0.0, 1.0e6);
    }
    match (rate_mbps, trace) {
        (None, None) if scheduled_rate.is_some() => {}
        (Some(rate_mbps), None) => {
            c.positive(&format!("{path}.rate_mbps"), rate_mbps);
            c.at_most(&format!("{path}.rate_mbps"), rate_mbps, 1.0e7);
        }
        (None, Some(t)) => {
            if t.file.is_empty() {
                c.fail(format!("{path}.trace.file"), "must name a trace file");
            }
            if t.reverse_file.as_ref().is_some_and(|f| f.is_empty()) {
                c.fail(format!("{path}.trace.reverse_file"), "must name a trace file");
            }
        }
        (Some(_), Some(_)) => c.fail(
            format!("{path}.trace"),
            "give rate_mbps or trace, not both: a trace sets the link's rate",
        ),
        (None, None) => c.fail(format!("{path}.rate_mbps"), "required (or a trace in its place)"),
    }
    c.non_negative(&format!("{path}.delay_ms"), delay_ms);
    c.at_most(&format!("{path}.delay_ms"), delay_ms, 1.0e6);
}

impl QueueSpec {
    pub fn check(&self, c: &mut Check, path: &str) {
        match self {
            QueueSpec::Droptail {
                limit_pkts,
                ecn_threshold_pkts,
            } => {
                if *limit_pkts == 0 {
                    c.fail(format!("{path}.limit_pkts"), "must be at least 1 packet");
                }
                if ecn_threshold_pkts.is_some_and(|k| k == 0 || k > *limit_pkts) {
                    c.fail(
                        format!("{path}.ecn_threshold_pkts"),
                        "must be between 1 packet and limit_pkts",
                    );
                }
            }
            QueueSpec::Red {
                limit_pkts,
                min_th_pkts,
                max_th_pkts,
                max_p,
                weight,
                mean_pkt_bytes,
                ..
            } => {
                if *limit_pkts == 0 {
                    c.fail(format!("{path}.limit_pkts"), "must be at least 1 packet");
                }
                let (min_th, max_th) = self.red_thresholds();
                if let Some(v) = min_th_pkts {
                    c.non_negative(&format!("{path}.min_th_pkts"), *v);
                }
                if let Some(v) = max_th_pkts {
                    c.positive(&format!("{path}.max_th_pkts"), *v);
                }
                if min_th.is_finite() && max_th.is_finite() && min_th >= max_th {
                    c.fail(
                        format!("{path}.max_th_pkts"),
                        format!("must be above min_th_pkts ({min_th}), got {max_th}"),
                    );
                }
                c.probability(&format!("{path}.max_p"), *max_p);
                c.probability(&format!("{path}.weight"), *weight);
                if *weight == 0.0 {
                    c.fail(format!("{path}.weight"), "must be > 0");
                }
                if *mean_pkt_bytes == 0 {
                    c.fail(format!("{path}.mean_pkt_bytes"), "must be at least 1 byte");
                }
            }
            QueueSpec::Codel {
                limit_pkts,
                target_ms,
                interval_ms,
                ..
            } => {
                check_queue_limit(c, path, *limit_pkts);
                check_queue_time(c, &format!("{path}.target_ms"), *target_ms);
                check_queue_time(c, &format!("{path}.interval_ms"), *interval_ms);
            }
            QueueSpec::Pie {
                limit_pkts,
                target_ms,
                t_update_ms,
                alpha,
                beta,
                max_burst_ms,
                ..
            } => {
                check_queue_limit(c, path, *limit_pkts);
                check_queue_time(c, &format!("{path}.target_ms"), *target_ms);
                check_queue_time(c, &format!("{path}.t_update_ms"), *t_update_ms);
                for (name, v) in [("alpha", *alpha), ("beta", *beta)] {
                    c.non_negative(&format!("{path}.{name}"), v);
                    c.at_most(&format!("{path}.{name}"), v, 1.0e6);
                }
                c.non_negative(&format!("{path}.max_burst_ms"), *max_burst_ms);
                c.at_most(&format!("{path}.max_burst_ms"), *max_burst_ms, 1.0e6);
            }
            QueueSpec::FqCodel {
                limit_pkts,
                flows,
                quantum_bytes,
                target_ms,
                interval_ms,
                ..
            } => {
                check_queue_limit(c, path, *limit_pkts);
                if !(1..=65_536).contains(flows) {
                    c.fail(
                        format!("{path}.flows"),
                        format!("must be between 1 and 65536 queues, got {flows}"),
                    );
                }
                if !(64..=1_000_000).contains(quantum_bytes) {
                    c.fail(
                        format!("{path}.quantum_bytes"),
                        format!("must be between 64 and 1,000,000 bytes, got {quantum_bytes}"),
                    );
                }
                check_queue_time(c, &format!("{path}.target_ms"), *target_ms);
                check_queue_time(c, &format!("{path}.interval_ms"), *interval_ms);
            }
            QueueSpec::Dualpi2 {
                limit_pkts,
                target_ms,
                t_update_ms,
                alpha,
                beta,
                coupling,
                ramp_min_ms,
                ramp_range_ms,
                classic_weight,
                ..
            } => {
                check_queue_limit(c, path, *limit_pkts);
                check_queue_time(c, &format!("{path}.target_ms"), *target_ms);
                check_queue_time(c, &format!("{path}.t_update_ms"), *t_update_ms);
                check_queue_time(c, &format!("{path}.ramp_min_ms"), *ramp_min_ms);
                for (name, v) in [("alpha", *alpha), ("beta", *beta), ("ramp_range_ms", *ramp_range_ms)] {
                    c.non_negative(&format!("{path}.{name}"), v);
                    c.at_most(&format!("{path}.{name}"), v, 1.0e6);
                }
                c.positive(&format!("{path}.coupling"), *coupling);
                c.at_most(&format!("{path}.coupling"), *coupling, 1.0e3);
                c.probability(&format!("{path}.classic_weight"), *classic_weight);
            }
        }
    }

    /// RED thresholds with paper 000's defaults (1/3 and 2/3 of the limit).
    pub fn red_thresholds(&self) -> (f64, f64) {
        match self {
            QueueSpec::Red {
                limit_pkts,
                min_th_pkts,
                max_th_pkts,
                ..
            } => (
                min_th_pkts.unwrap_or(*limit_pkts as f64 / 3.0),
                max_th_pkts.unwrap_or(2.0 * *limit_pkts as f64 / 3.0),
            ),
            _ => (0.0, 0.0),
        }
    }
}

fn check_queue_limit(c: &mut Check, path: &str, limit_pkts: u32) {
    if limit_pkts == 0 {
        c.fail(format!("{path}.limit_pkts"), "must be at least 1 packet");
    }
}

/// An AQM's time parameter in ms: positive, at least 1 µs (time is integer ns), at most 1000 s.
fn check_queue_time(c: &mut Check, path: &str, ms: f64) {
    c.positive(path, ms);
    c.at_most(path, ms, 1.0e6);
    if ms.is_finite() && ms > 0.0 && ms < 1e-3 {
        c.fail(path, format!("must be at least 0.001 ms (1 µs), got {}", show(ms)));
    }
}

impl LossSpec {
    pub fn check(&self, c: &mut Check, path: &str) {
        match self {
            LossSpec::Uniform { rate } => c.probability(&format!("{path}.rate"), *rate),
            LossSpec::BernoulliEvents { p, m, event_span_s, .. } => {
                c.probability(&format!("{path}.p"), *p);
                if let Some(span) = event_span_s {
                    c.positive(&format!("{path}.event_span_s"), *span);
                    c.at_most(&format!("{path}.event_span_s"), *span, MAX_DURATION_S);
                }
                if *m == 0 {
                    c.fail(
                        format!("{path}.m"),
                        "must be at least 1 (packets dropped per loss event)",
                    );
                }
            }
            LossSpec::Scheduled { packets } => {
                if let Some(i) = packets.iter().position(|&n| n == 0) {
                    c.fail(format!("{path}.packets[{i}]"), "packets are numbered from 1");
                }
                if packets.len() > 1_000_000 {
                    c.fail(format!("{path}.packets"), "at most 1,000,000 scheduled drops");
                }
            }
            LossSpec::Outage { start_s, end_s, rate } => {
                c.non_negative(&format!("{path}.start_s"), *start_s);
                c.non_negative(&format!("{path}.end_s"), *end_s);
                if start_s.is_finite() && end_s.is_finite() && end_s < start_s {
                    c.fail(
                        format!("{path}.end_s"),
                        format!("must not be before start_s ({start_s})"),
                    );
                }
                c.probability(&format!("{path}.rate"), *rate);
            }
            LossSpec::Schedule { rate } => rate.check(c, &format!("{path}.rate"), 0.0, 1.0),
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                c.probability(&format!("{path}.p_good_to_bad"), *p_good_to_bad);
                c.probability(&format!("{path}.p_bad_to_good"), *p_bad_to_good);
                c.probability(&format!("{path}.loss_good"), *loss_good);
                c.probability(&format!("{path}.loss_bad"), *loss_bad);
            }
        }
    }
}

impl TcpConfig {
    pub fn check(&self, c: &mut Check, path: &str) {
        if !(64..=65_000).contains(&self.mss_bytes) {
            c.fail(
                format!("{path}.mss_bytes"),
                format!("must be between 64 and 65000 bytes, got {}", self.mss_bytes),
            );
        }
        if self.header_bytes > 1000 {
            c.fail(
                format!("{path}.header_bytes"),
                format!("must be at most 1000 bytes, got {}", self.header_bytes),
            );
        }
        c.positive(&format!("{path}.initial_cwnd_pkts"), self.initial_cwnd_pkts);
        c.at_most(&format!("{path}.initial_cwnd_pkts"), self.initial_cwnd_pkts, 1.0e6);
        if let Some(v) = self.initial_ssthresh_pkts {
            c.positive(&format!("{path}.initial_ssthresh_pkts"), v);
        }
        if self.max_window_pkts == 0 || self.max_window_pkts > 10_000_000 {
            c.fail(
                format!("{path}.max_window_pkts"),
                "must be between 1 and 10,000,000 segments",
            );
        }
        c.positive(&format!("{path}.delack_timeout_s"), self.delack_timeout_s);
        c.at_most(&format!("{path}.delack_timeout_s"), self.delack_timeout_s, 1.0e3);
        if self.dupack_threshold == 0 || self.dupack_threshold > 1000 {
            c.fail(format!("{path}.dupack_threshold"), "must be between 1 and 1000");
        }
        if self.quickack_pkts > u16::MAX as u32 {
            c.fail(format!("{path}.quickack_pkts"), "must be at most 65535 segments");
        }
        for (name, v) in [
            ("initial_rto_s", self.initial_rto_s),
            ("min_rto_s", self.min_rto_s),
            ("delack_timeout_s", self.delack_timeout_s),
        ] {
            // A timer must advance simulated time: at least one microsecond.
            if v.is_finite() && v > 0.0 && v < 1e-6 {
                c.fail(
                    format!("{path}.{name}"),
                    format!("must be at least 1e-6 s (1 µs), got {}", show(v)),
                );
            }
        }
        c.positive(&format!("{path}.initial_rto_s"), self.initial_rto_s);
        c.at_most(&format!("{path}.initial_rto_s"), self.initial_rto_s, 1.0e5);
        c.positive(&format!("{path}.min_rto_s"), self.min_rto_s);
        c.positive(&format!("{path}.max_rto_s"), self.max_rto_s);
        c.at_most(&format!("{path}.max_rto_s"), self.max_rto_s, 1.0e5);
        if self.min_rto_s.is_finite() && self.max_rto_s.is_finite() && self.min_rto_s > self.max_rto_s {
            c.fail(
                format!("{path}.max_rto_s"),
                format!("must be at least min_rto_s ({})", self.min_rto_s),
            );
        }
        for (name, v) in [("rtt_gain", self.rtt_gain), ("rttvar_gain", self.rttvar_gain)] {
            c.probability(&format!("{path}.{name}"), v);
            if v == 0.0 {
                c.fail(format!("{path}.{name}"), "must be > 0");
            }
        }
        c.non_negative(&format!("{path}.rttvar_k"), self.rttvar_k);
        c.non_negative(&format!("{path}.timer_granularity_s"), self.timer_granularity_s);
        c.at_most(&format!("{path}.timer_granularity_s"), self.timer_granularity_s, 10.0);
        if let Some(h) = &self.hystart {
            let at = |field: &str| format!("{path}.hystart.{field}");
            c.positive(&at("min_rtt_thresh_ms"), h.min_rtt_thresh_ms);
            c.positive(&at("max_rtt_thresh_ms"), h.max_rtt_thresh_ms);
            c.at_most(&at("max_rtt_thresh_ms"), h.max_rtt_thresh_ms, 1.0e6);
            if h.min_rtt_thresh_ms.is_finite() && h.min_rtt_thresh_ms > h.max_rtt_thresh_ms {
                c.fail(
                    at("max_rtt_thresh_ms"),
                    format!("must be at least min_rtt_thresh_ms ({})", h.min_rtt_thresh_ms),
                );
            }
            c.positive(&at("min_rtt_divisor"), h.min_rtt_divisor);
            c.positive(&at("css_growth_divisor"), h.css_growth_divisor);
            c.at_most(&at("css_growth_divisor"), h.css_growth_divisor, 1.0e6);
            c.non_negative(&at("min_window_pkts"), h.min_window_pkts);
            if h.n_rtt_sample == 0 {
                c.fail(at("n_rtt_sample"), "must be at least 1");
            }
        }
        if let Some(p) = &self.pacing {
            for (name, ratio) in [("ss_ratio", p.ss_ratio), ("ca_ratio", p.ca_ratio)] {
                c.positive(&format!("{path}.pacing.{name}"), ratio);
                c.at_most(&format!("{path}.pacing.{name}"), ratio, 100.0);
            }
        }
        let v = &self.vegas;
        c.non_negative(&format!("{path}.vegas.alpha"), v.alpha);
        c.non_negative(&format!("{path}.vegas.beta"), v.beta);
        c.non_negative(&format!("{path}.vegas.gamma"), v.gamma);
        if v.alpha.is_finite() && v.beta.is_finite() && v.alpha > v.beta {
            c.fail(
                format!("{path}.vegas.beta"),
                format!("must be at least alpha ({})", v.alpha),
            );
        }
        self.check_variant_params(c, path);
    }

    /// The ranges of the variants' own knobs (`cc/<variant>.rs` gives each its meaning).
    fn check_variant_params(&self, c: &mut Check, path: &str) {
        let cubic = &self.cubic;
        c.positive(&format!("{path}.cubic.c"), cubic.c);
        c.at_most(&format!("{path}.cubic.c"), cubic.c, 1.0e6);
        if c.finite(&format!("{path}.cubic.beta"), cubic.beta) && !(cubic.beta > 0.0 && cubic.beta < 1.0) {
            c.fail(
                format!("{path}.cubic.beta"),
                format!("must be in (0, 1), got {}", show(cubic.beta)),
            );
        }
        let ssdr = &self.ssdr;
        if !(1..=SsdrParams::MAX_GRAIN).contains(&ssdr.grain) {
            c.fail(
                format!("{path}.ssdr.grain"),
                format!(
                    "must be between 1 and {} ACKs, got {}",
                    SsdrParams::MAX_GRAIN,
                    ssdr.grain
                ),
            );
        }
        if ssdr.depth > SsdrParams::MAX_DEPTH {
            c.fail(
                format!("{path}.ssdr.depth"),
                format!("must be between 0 and {}, got {}", SsdrParams::MAX_DEPTH, ssdr.depth),
            );
        }
        c.positive(&format!("{path}.pseudo_rate.queue_pkts"), self.pseudo_rate.queue_pkts);
        c.at_most(
            &format!("{path}.pseudo_rate.queue_pkts"),
            self.pseudo_rate.queue_pkts,
            1.0e7,
        );
        self.check_ns3_variant_params(c, path);
        self.check_bbr_params(c, &format!("{path}.bbr"));
    }

    /// The knobs of ns-3.44's other variants (issue 17).
    fn check_ns3_variant_params(&self, c: &mut Check, path: &str) {
        let at = |field: &str| format!("{path}.{field}");
        let fraction = |c: &mut Check, field: &str, v: f64| {
            if c.finite(&at(field), v) && !(v > 0.0 && v < 1.0) {
                c.fail(at(field), format!("must be in (0, 1), got {}", show(v)));
            }
        };
        c.positive(&at("scalable.a"), self.scalable.a);
        c.at_most(&at("scalable.a"), self.scalable.a, 1.0);
        fraction(c, "scalable.b", self.scalable.b);
        fraction(c, "scalable.legacy_b", self.scalable.legacy_b);
        c.positive(&at("hybla.rtt0_ms"), self.hybla.rtt0_ms);
        c.at_most(&at("hybla.rtt0_ms"), self.hybla.rtt0_ms, 1.0e5);
        c.non_negative(&at("prague.rtt_virt_ms"), self.prague.rtt_virt_ms);
        c.at_most(&at("prague.rtt_virt_ms"), self.prague.rtt_virt_ms, 1.0e5);
        c.positive(&at("ledbat.target_ms"), self.ledbat.target_ms);
        c.at_most(&at("ledbat.target_ms"), self.ledbat.target_ms, 1.0e5);
        c.positive(&at("ledbat.gain"), self.ledbat.gain);
        c.at_most(&at("ledbat.gain"), self.ledbat.gain, 100.0);
        fraction(c, "lp.threshold", self.lp.threshold);
        c.positive(&at("lp.inference_rtts"), self.lp.inference_rtts);
        c.at_most(&at("lp.inference_rtts"), self.lp.inference_rtts, 1000.0);
        let y = &self.yeah;
        for (field, v) in [
            ("yeah.gamma", y.gamma),
            ("yeah.phy", y.phy),
            ("yeah.stcp_ai_factor", y.stcp_ai_factor),
        ] {
            if v == 0 {
                c.fail(at(field), "must be at least 1");
            }
        }
        for (field, v) in [("yeah.delta", y.delta), ("yeah.epsilon", y.epsilon)] {
            if v > YeahParams::MAX_SHIFT {
                c.fail(
                    at(field),
                    format!("must be between 0 and {}, got {v}", YeahParams::MAX_SHIFT),
                );
            }
        }
    }

    /// `tcp.bbr`'s ranges (cc/bbr.rs gives each switch its source).
    fn check_bbr_params(&self, c: &mut Check, path: &str) {
        let b = &self.bbr;
        c.non_negative(&format!("{path}.probe_bw_extra_pkts"), b.probe_bw_extra_pkts);
        c.at_most(&format!("{path}.probe_bw_extra_pkts"), b.probe_bw_extra_pkts, 1.0e6);
        if c.finite(&format!("{path}.pacing_margin"), b.pacing_margin) && !(0.0..1.0).contains(&b.pacing_margin) {
            c.fail(
                format!("{path}.pacing_margin"),
                format!("must be in [0, 1), got {}", show(b.pacing_margin)),
            );
        }
        if let Some(q) = b.send_quantum_pkts {
            c.positive(&format!("{path}.send_quantum_pkts"), q);
            c.at_most(&format!("{path}.send_quantum_pkts"), q, 1.0e6);
        }
        if let Some(a) = &b.ack_aggregation {
            let at = |field: &str| format!("{path}.ack_aggregation.{field}");
            c.non_negative(&at("gain"), a.gain);
            c.at_most(&at("gain"), a.gain, 100.0);
            if a.window_rounds == 0 || a.window_rounds > 31 {
                c.fail(
                    at("window_rounds"),
                    format!("must be between 1 and 31, got {}", a.window_rounds),
                );
            }
            c.non_negative(&at("max_s"), a.max_s);
            c.at_most(&at("max_s"), a.max_s, 60.0);
            c.positive(&at("epoch_reset_pkts"), a.epoch_reset_pkts);
        }
        if let Some(l) = &b.long_term_bw {
            let at = |field: &str| format!("{path}.long_term_bw.{field}");
            if l.min_rounds == 0 || l.min_rounds > 1000 {
                c.fail(
                    at("min_rounds"),
                    format!("must be between 1 and 1000, got {}", l.min_rounds),
                );
            }
            c.probability(&at("loss_thresh"), l.loss_thresh);
            c.non_negative(&at("bw_ratio"), l.bw_ratio);
            c.at_most(&at("bw_ratio"), l.bw_ratio, 1.0);
            c.non_negative(&at("bw_diff_bps"), l.bw_diff_bps);
            if l.max_rounds == 0 {
                c.fail(at("max_rounds"), "must be at least 1");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{"duration_s": 200, "warmup_s": 50, "seed": 1,
     "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 45, "delay_ms": 5,
                                              "queue": {"type": "droptail", "limit_pkts": 1000}}}},
     "flows": [{"name": "sbs", "type": "tcp", "variant": "newreno-sbs", "rtt_ms": 70,
                "app": {"type": "ftp"}, "tcp": {"min_rto_s": 0.2},
                "loss": {"type": "bernoulli_events", "p": 0.0005, "m": 10}}]}"#;

    #[test]
    fn the_issue_example_parses_with_defaults_filled_in() {
        let s = Scenario::from_json(EXAMPLE).unwrap();
        assert_eq!(s.flows[0].variant.as_deref(), Some("newreno-sbs"));
        assert_eq!(s.flows[0].tcp.mss_bytes, 1000);
        assert_eq!(
            s.flows[0].loss,
            Some(LossSpec::BernoulliEvents {
                p: 0.0005,
                m: 10,
                spare_retransmissions: true,
                event_span_s: None,
                spacing: EventSpacing::Random
            })
        );
    }

    #[test]
    fn a_scenario_survives_a_round_trip_through_json() {
        let s = Scenario::from_json(EXAMPLE).unwrap();
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn an_unknown_field_is_rejected_with_its_path() {
        let bad = EXAMPLE.replace("\"min_rto_s\"", "\"min_rto\"");
        let err = Scenario::from_json(&bad).unwrap_err();
        assert_eq!(err.path(), Some("$.flows[0].tcp.min_rto"));
        assert!(err.to_string().contains("unknown field"), "{err}");
    }

    #[test]
    fn a_wrong_type_names_the_field() {
        let bad = EXAMPLE.replace("\"rate_mbps\": 45", "\"rate_mbps\": \"fast\"");
        let err = Scenario::from_json(&bad).unwrap_err();
        assert_eq!(err.path(), Some("$.topology.dumbbell.bottleneck.rate_mbps"));
    }

    #[test]
    fn a_json_array_or_truncated_text_is_refused_at_the_root() {
        for text in ["[]", "[1, 2]", "42", "{", ""] {
            let err = Scenario::from_json(text).unwrap_err();
            assert_eq!(err.path(), Some("$"), "{text:?}: {err}");
        }
        assert!(Scenario::from_json("[1]")
            .unwrap_err()
            .to_string()
            .contains("got an array"));
    }

    #[test]
    fn huge_numbers_are_shown_short_in_errors() {
        assert_eq!(show(1e300), "1.000e300");
        assert_eq!(show(0.25), "0.25");
    }

    #[test]
    fn an_unknown_loss_type_is_rejected() {
        let bad = EXAMPLE.replace("bernoulli_events", "bernoulli");
        let err = Scenario::from_json(&bad).unwrap_err();
        assert!(err.path().unwrap().starts_with("$.flows[0].loss"), "{err}");
    }

    fn one_flow(tcp: &str) -> String {
        format!(
            r#"{{"duration_s": 1, "topology": {{"dumbbell": {{"bottleneck": {{"rate_mbps": 10, "delay_ms": 5}}}}}}, "flows": [{{"name": "f", "rtt_ms": 50, "tcp": {tcp}}}, {{"name": "g", "rtt_ms": 50}}]}}"#
        )
    }

    #[test]
    fn a_profile_sets_the_fields_a_flow_leaves_out_and_a_given_field_wins() {
        let s = Scenario::from_json(&one_flow(r#"{"profile": "ns2", "min_rto_s": 1.0}"#)).unwrap();
        let tcp = &s.flows[0].tcp;
        assert_eq!(tcp.profile, Some(TcpProfile::Ns2));
        assert_eq!(
            (tcp.max_window_pkts, tcp.limited_transmit, tcp.integer_ssthresh),
            (20, true, true)
        );
        assert_eq!(tcp.recover_guard, RecoverGuard::AckPassesRecover);
        assert_eq!(tcp.min_rto_s, 1.0, "the scenario's own value, not ns-2's 0.2");
        assert_eq!(
            s.flows[1].tcp,
            TcpConfig::default(),
            "a flow without a profile keeps tcpsim's defaults"
        );
    }

    #[test]
    fn the_linux_profiles_rack_tlp_serves_the_sack_variants_and_leaves_the_others_their_recovery() {
        let text = |variant: &str, tcp: &str| {
            one_flow(tcp).replacen(
                r#""rtt_ms": 50,"#,
                &format!(r#""rtt_ms": 50, "variant": "{variant}","#),
                1,
            )
        };
        let rack = |variant: &str, tcp: &str| Scenario::from_json(&text(variant, tcp)).unwrap().flows[0].tcp.rack;
        assert!(rack("cubic", r#"{"profile": "linux"}"#));
        assert!(rack("sack", r#"{"profile": "linux"}"#));
        assert!(!rack("reno", r#"{"profile": "linux"}"#), "Reno recovers without SACK");
        assert!(
            !rack("cubic", r#"{"profile": "linux", "rack": false}"#),
            "a given field wins"
        );
        assert!(!rack("cubic", r#"{"profile": "ns3"}"#));
        let s = Scenario::from_json(&text("reno", r#"{"profile": "linux"}"#)).unwrap();
        assert_eq!(
            Scenario::from_json(&s.to_json()).unwrap(),
            s,
            "the normal form reads back"
        );
    }

    #[test]
    fn the_ns3_and_linux_profiles_take_an_eighth_off_scalables_window_below_its_legacy_window_too() {
        // ns-3.44 tcp-scalable.cc (TcpScalable::GetSsThresh) and Linux tcp_scalable.c
        // (tcp_scalable_ssthresh) take 1/8 at every window and add one segment per
        // min(cwnd, 50) ACKs; the paper's legacy mode, tcpsim's default, halves.
        for (profile, legacy_b) in [("ns3", 0.125), ("linux", 0.125), ("ns2", 0.5)] {
            let s = Scenario::from_json(&one_flow(&format!(r#"{{"profile": "{profile}"}}"#))).unwrap();
            let p = &s.flows[0].tcp.scalable;
            assert_eq!(p.legacy_b, legacy_b, "{profile}");
            assert_eq!(p.a, if legacy_b == 0.5 { 0.01 } else { 0.02 }, "{profile}");
        }
    }

    #[test]
    fn only_the_ns3_profile_grows_veno_as_reno_whatever_its_backlog() {
        // ns-3.44 tcp-veno.cc (TcpVeno::IncreaseWindow resets m_cntRtt on every ACK); Linux's
        // tcp_veno.c leaves that reset out and halves the growth once N reaches β.
        for profile in TcpProfile::ALL {
            let s = Scenario::from_json(&one_flow(&format!(r#"{{"profile": "{}"}}"#, profile.name()))).unwrap();
            assert_eq!(
                s.flows[0].tcp.veno.reno_growth,
                profile == TcpProfile::Ns3,
                "{profile:?}"
            );
        }
    }

    #[test]
    fn every_profile_reads_as_a_tcp_config_and_its_normal_form_reads_back_the_same() {
        for profile in TcpProfile::ALL {
            // A SACK variant, so that every setting applies (`rack` serves only those).
            let text = one_flow(&format!(r#"{{"profile": "{}"}}"#, profile.name())).replacen(
                r#""rtt_ms": 50,"#,
                r#""rtt_ms": 50, "variant": "cubic","#,
                1,
            );
            let s = Scenario::from_json(&text).unwrap();
            let tcp = &s.flows[0].tcp;
            assert_eq!(tcp.profile, Some(profile));
            let same = |ours: &serde_json::Value, setting: &serde_json::Value| {
                ours == setting || ours.as_f64() == setting.as_f64() && ours.is_number()
            };
            for (field, setting) in profile.settings().as_object().unwrap() {
                let ours = serde_json::to_value(tcp).unwrap()[field].clone();
                match setting.as_object() {
                    // An object setting names some of its fields; the rest keep their defaults.
                    Some(fields) => {
                        for (key, value) in fields {
                            assert!(
                                same(&ours[key], value),
                                "{profile:?}.{field}.{key}: {ours} vs {setting}"
                            );
                        }
                    }
                    None => assert!(same(&ours, setting), "{profile:?}.{field}: {ours} vs {setting}"),
                }
            }
            assert_eq!(Scenario::from_json(&s.to_json()).unwrap(), s, "{profile:?}");
            assert_eq!(serde_json::to_value(profile).unwrap(), profile.name());
        }
    }

    #[test]
    fn an_unknown_profile_is_refused_at_its_path() {
        let err = Scenario::from_json(&one_flow(r#"{"profile": "ns-3"}"#)).unwrap_err();
        assert_eq!(err.path(), Some("$.flows[0].tcp.profile"), "{err}");
    }
}
