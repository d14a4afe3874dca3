//! Measurement: per-flow and per-link counters, the loss-event tracker, and the result a run
//! returns. Every figure covers the window [warmup_s, duration_s]: counters are cumulative and
//! the window is the difference of a snapshot taken at warmup and the final values.

use serde::Serialize;

use crate::net::wifi::WifiCounters;
use crate::net::{LinkCounters, QueueDelays};
use crate::tcp::SenderCounters;
use crate::time::{to_secs, SimTime};

pub const CORE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A flow's own counters (the sender's live in `SenderCounters`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowCounters {
    /// Data segments (or datagrams) of this flow dropped anywhere: queues or loss modules.
    pub drops: u64,
    pub ack_drops: u64,
    pub loss_events: u64,
    pub datagrams_sent: u64,
    pub datagram_bytes_sent: u64,
    /// Data segments or datagrams that reached the receiver (duplicates included).
    pub packets_received: u64,
    pub datagram_bytes_received: u64,
    /// Payload bytes of distinct segments received (TCP).
    pub delivered_bytes: u64,
}

/// Groups a flow's drops into loss events: a drop more than one RTT after the current event's
/// first drop starts a new event (paper 000 §III-A; the usual TFRC-style definition).
#[derive(Clone, Copy, Debug, Default)]
pub struct LossEventTracker {
    event_start: Option<SimTime>,
}

impl LossEventTracker {
    /// Records a drop at `now`; true when it starts a new loss event.
    pub fn on_drop(&mut self, now: SimTime, rtt: SimTime) -> bool {
        match self.event_start {
            Some(start) if now <= start + rtt => false,
            _ => {
                self.event_start = Some(now);
                true
            }
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowResult {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// TCP variant; null for UDP.
    pub variant: Option<String>,
    /// Round-trip propagation delay of the flow's route.
    pub rtt_propagation_s: f64,
    /// Bits put on the wire by the sender per second (data, retransmissions and headers).
    pub throughput_bps: f64,
    /// Payload bits of distinct segments (datagrams) received per second.
    pub goodput_bps: f64,
    /// Data packets sent per mean RTT: the unit of paper 000's Fig. 2 and Table II.
    pub throughput_pkts_per_rtt: Option<f64>,
    pub goodput_pkts_per_rtt: Option<f64>,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub retransmits: u64,
    pub drops: u64,
    pub ack_drops: u64,
    /// drops / packets_sent.
    pub loss_rate: Option<f64>,
    pub loss_events: u64,
    /// loss_events / packets_sent: paper 000's p.
    pub loss_event_rate: Option<f64>,
    /// drops / loss_events: paper 000's m.
    pub drops_per_loss_event: Option<f64>,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub fast_recoveries: u64,
    /// Mean duration of a fast recovery that ended with a full ACK (paper 000: the "lengthy
    /// fast recovery" of Slow-but-Steady), from the fast retransmit to the full ACK.
    pub mean_recovery_s: Option<f64>,
    /// Mean RTT measured from ACK timestamp echoes (queueing included): paper 000's R.
    pub mean_rtt_s: Option<f64>,
    /// Mean retransmit-timer value, sampled at each RTO update.
    pub mean_rto_s: Option<f64>,
    /// Transfers completed over the whole run and their mean response time.
    pub downloads: u64,
    pub download_time_s: Option<f64>,
    /// With `tcp.ecn` only (absent otherwise): CE-marked data segments that reached the
    /// receiver, and the sender's window reductions for ECE (at most one per window of data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_marks_received: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwnd_reductions_ecn: Option<u64>,
    /// DCTCP only (absent otherwise): its α, the estimated fraction of its data marked
    /// (RFC 8257 §3.3), averaged over the segments acknowledged in the window (for an
    /// application of several transfers, those of the current connection: each starts afresh).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dctcp_alpha: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkResult {
    pub name: String,
    pub from: String,
    pub to: String,
    /// The link's rate; on a trace its mean rate, under a rate schedule the mean of the
    /// scheduled rate over the measurement window (`Link::mean_rate_bps`).
    pub rate_bps: u64,
    /// Bits delivered in the window over what `rate_bps` could carry in it.
    pub utilization: f64,
    pub packets: u64,
    pub drops: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    /// Time-average of packets waiting (Little's law over the window).
    pub mean_queue_pkts: f64,
    /// Queueing delay (sojourn: acceptance to the start of transmission) of the packets accepted
    /// in the window, those that did not wait included: the mean (exact) and the 95th and
    /// 99th percentiles (nearest rank, within 0.79 %: see `histogram`). Null without packets.
    pub mean_queue_delay_s: Option<f64>,
    pub p95_queue_delay_s: Option<f64>,
    pub p99_queue_delay_s: Option<f64>,
    /// Under CoDel, PIE and FQ-CoDel only (absent under Drop-Tail and RED): `queue_drops` by
    /// reason — a full buffer, or the active queue management's choice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overflow_drops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aqm_drops: Option<u64>,
    /// Packets the queue marked CE instead of dropping: only on a queue with `ecn`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_marks: Option<u64>,
    /// On an 802.11 link only: its MAC's counts (data frames sent, retransmissions among them,
    /// frames dropped at the retry limit, and collisions), which `loss_drops` and `packets`
    /// sum up from the network's side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wifi: Option<WifiCounters>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Fairness {
    /// Jain's index over the flows' goodput.
    pub jain: Option<f64>,
    /// Paper 003 §4.2: |mean long − mean short| / mean of all × 100, long and short being the
    /// flows with the largest and smallest propagation RTT; null when all RTTs are equal.
    pub uf_percent: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Traces {
    pub time_s: Vec<f64>,
    pub flows: Vec<FlowTrace>,
    pub links: Vec<LinkTrace>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowTrace {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwnd: Option<Vec<f64>>,
    /// Infinite (no threshold yet) is written as null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssthresh: Option<Vec<Option<f64>>>,
    /// Bits of the flow's data segments (datagrams) that reached its receiver in the interval
    /// ending at the sample, per second: the delivery rate Pantheon plots (headers,
    /// retransmissions and duplicates included; 0 at time 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_bps: Option<Vec<f64>>,
    /// Mean one-way delay (the sender's transmission to the arrival at the receiver:
    /// propagation, transmission and queueing) of those segments; null when none arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_s: Option<Vec<Option<f64>>>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkTrace {
    pub name: String,
    pub queue: Vec<u32>,
}

/// Machine-dependent figures, kept apart so the rest of a result is bit-for-bit reproducible.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Stats {
    pub events: u64,
    pub wall_s: f64,
    pub events_per_s: f64,
    pub simulated_s: f64,
    /// Most packets alive at once (queues and wires): the memory high-water mark.
    pub peak_packets: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunResult {
    pub core_version: &'static str,
    pub seed: u64,
    pub measured_from_s: f64,
    pub measured_to_s: f64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub fairness: Fairness,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traces: Option<Traces>,
    pub stats: Stats,
}

pub struct FlowInputs<'a> {
    pub name: &'a str,
    pub variant: Option<&'a str>,
    pub rtt_propagation: SimTime,
    pub mss: u32,
    pub sender: Option<SenderCounters>,
    pub flow: FlowCounters,
    pub downloads: crate::traffic::Downloads,
    /// With `tcp.ecn`: (CE-marked segments received, window reductions for ECE).
    pub ecn: Option<(u64, u64)>,
    /// DCTCP's mean α over the window.
    pub dctcp_alpha: Option<f64>,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

pub fn flow_result(i: FlowInputs, window_s: f64) -> FlowResult {
    let f = &i.flow;
    let (sent, sent_bytes, retransmits) = match &i.sender {
        Some(s) => (s.packets_sent, s.wire_bytes_sent, s.retransmits),
        None => (f.datagrams_sent, f.datagram_bytes_sent, 0),
    };
    let delivered = if i.sender.is_some() {
        f.delivered_bytes
    } else {
        f.datagram_bytes_received
    };
    let s = i.sender.unwrap_or_default();
    let mean_rtt = ratio(s.rtt_sum_ns as f64, s.rtt_samples as f64).map(|ns| ns / 1e9);
    let throughput_bps = sent_bytes as f64 * 8.0 / window_s;
    let goodput_bps = delivered as f64 * 8.0 / window_s;
    FlowResult {
        name: i.name.to_string(),
        kind: if i.sender.is_some() { "tcp" } else { "udp" },
        variant: i.variant.map(str::to_string),
        rtt_propagation_s: to_secs(i.rtt_propagation),
        throughput_bps,
        goodput_bps,
        throughput_pkts_per_rtt: mean_rtt.map(|r| sent as f64 / window_s * r),
        goodput_pkts_per_rtt: mean_rtt.map(|r| goodput_bps / (8.0 * i.mss as f64) * r),
        packets_sent: sent,
        packets_received: f.packets_received,
        retransmits,
        drops: f.drops,
        ack_drops: f.ack_drops,
        loss_rate: ratio(f.drops as f64, sent as f64),
        loss_events: f.loss_events,
        loss_event_rate: ratio(f.loss_events as f64, sent as f64),
        drops_per_loss_event: ratio(f.drops as f64, f.loss_events as f64),
        timeouts: s.timeouts,
        fast_retransmits: s.fast_retransmits,
        fast_recoveries: s.fast_recoveries,
        mean_recovery_s: ratio(s.recovery_ns as f64, s.recoveries_completed as f64).map(|ns| ns / 1e9),
        mean_rtt_s: mean_rtt,
        mean_rto_s: ratio(s.rto_sum_ns as f64, s.rto_samples as f64).map(|ns| ns / 1e9),
        downloads: i.downloads.count,
        download_time_s: ratio(i.downloads.total_s, i.downloads.count as f64),
        ecn_marks_received: i.ecn.map(|(marks, _)| marks),
        cwnd_reductions_ecn: i.ecn.map(|(_, reductions)| reductions),
        dctcp_alpha: i.dctcp_alpha,
    }
}

pub fn link_result(
    name: &str,
    (from, to): (&str, &str),
    rate_bps: u64,
    c: &LinkCounters,
    delays: QueueDelays,
    // What only some queues report: drops by reason (scheduled ones), CE marks (with `ecn`).
    (drops_by_reason, ecn_marks): (Option<(u64, u64)>, Option<u64>),
    window: SimTime,
) -> LinkResult {
    let window_s = to_secs(window);
    LinkResult {
        name: name.to_string(),
        from: from.to_string(),
        to: to.to_string(),
        rate_bps,
        utilization: (c.delivered_bytes as f64 * 8.0 / (rate_bps as f64 * window_s)).min(1.0),
        packets: c.delivered_packets,
        drops: c.queue_drops + c.loss_drops,
        queue_drops: c.queue_drops,
        loss_drops: c.loss_drops,
        mean_queue_pkts: c.wait_ns as f64 / window as f64,
        mean_queue_delay_s: delays.mean_s,
        p95_queue_delay_s: delays.p95_s,
        p99_queue_delay_s: delays.p99_s,
        overflow_drops: drops_by_reason.map(|(overflow, _)| overflow),
        aqm_drops: drops_by_reason.map(|(_, aqm)| aqm),
        ecn_marks,
        wifi: None,
    }
}

/// Jain's fairness index (Jain, Chiu & Hawe 1984): (Σx)² / (n Σx²).
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    (squares > 0.0).then(|| sum * sum / (xs.len() as f64 * squares))
}

/// Paper 003's unfairness between the longest- and shortest-RTT flows.
pub fn unfairness_percent(flows: &[FlowResult]) -> Option<f64> {
    let rtts = flows.iter().map(|f| f.rtt_propagation_s);
    let (lo, hi) = rtts.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r), hi.max(r)));
    if flows.is_empty() || hi - lo < 1e-12 {
        return None;
    }
    let mean_of = |rtt: f64| {
        let g: Vec<f64> = flows
            .iter()
            .filter(|f| (f.rtt_propagation_s - rtt).abs() < 1e-12)
            .map(|f| f.goodput_bps)
            .collect();
        g.iter().sum::<f64>() / g.len() as f64
    };
    let all = flows.iter().map(|f| f.goodput_bps).sum::<f64>() / flows.len() as f64;
    ratio((mean_of(hi) - mean_of(lo)).abs() * 100.0, all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_hog() {
        assert_eq!(jain_index(&[3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain_index(&[5.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }

    #[test]
    fn drops_within_one_rtt_of_the_first_belong_to_one_event() {
        let mut t = LossEventTracker::default();
        let rtt = 100;
        let starts: Vec<bool> = [0, 50, 100, 101, 150, 202]
            .iter()
            .map(|&now| t.on_drop(now, rtt))
            .collect();
        assert_eq!(starts, vec![true, false, false, true, false, true]);
    }

    fn flow(rtt: f64, goodput: f64) -> FlowResult {
        let mut f = flow_result(
            FlowInputs {
                name: "f",
                variant: None,
                rtt_propagation: 0,
                mss: 1000,
                sender: None,
                flow: FlowCounters::default(),
                downloads: Default::default(),
                ecn: None,
                dctcp_alpha: None,
            },
            1.0,
        );
        f.rtt_propagation_s = rtt;
        f.goodput_bps = goodput;
        f
    }

    #[test]
    fn uf_reproduces_paper_003_table_2_reno_row() {
        // Reno, n = 2: short 15649, long 695 → UF 182.99 %.
        let uf = unfairness_percent(&[flow(0.001, 15649.0), flow(0.08, 695.0)]).unwrap();
        assert!((uf - 182.99).abs() < 0.01, "{uf}");
        assert_eq!(unfairness_percent(&[flow(0.05, 1.0), flow(0.05, 2.0)]), None);
    }
}
