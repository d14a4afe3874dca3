//! HyStart++ (RFC 9406): leaves the first slow start when the round trip time starts to rise,
//! before the buffer overflows, instead of at the first loss. It wraps any variant whose slow
//! start is RFC 5681's (`CongestionControl::own_slow_start` false), taking over the window's
//! growth while the first slow start lasts and handing every other call to the variant.
//!
//! §4.2: each round (ended by the ACK of the highest segment sent when it began) keeps the least
//! RTT of its samples. Once a round has `n_rtt_sample` samples and the previous round's minimum
//! is known, a rise of at least RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms) leaves slow
//! start for Conservative Slow Start (CSS): growth divided by `css_growth_divisor`. A round in CSS
//! whose minimum falls back below the RTT that started it returns to slow start (the rise was
//! noise); after `css_rounds` rounds in CSS, ssthresh = cwnd and congestion avoidance begins.
//! §4.3: only the first slow start (ssthresh still unset) uses it; later ones, after a timeout,
//! stop at the ssthresh the losses set.
//!
//! `css_rounds: 0` leaves slow start at the rise itself, as Linux's CUBIC does with its delay
//! detector (tcp_cubic.c `hystart_update`, HYSTART_DELAY: the same 8 samples and 4–16 ms
//! threshold; Linux's other detector, the ACK train, is not modelled), and `min_window_pkts`
//! is Linux's `hystart_low_window` (16): no exit below that window.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CongestionControl;
use crate::tcp::{RateSample, Recovery, SocketState};
use crate::time::{from_millis, SimTime};

/// RFC 9406 §4.3's constants, as a scenario's `tcp.hystart` (absent: plain slow start).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HystartParams {
    /// MIN_RTT_THRESH: the least RTT rise that counts, ms (RFC 9406: 4).
    pub min_rtt_thresh_ms: f64,
    /// MAX_RTT_THRESH: the rise that always counts, ms (RFC 9406: 16).
    pub max_rtt_thresh_ms: f64,
    /// MIN_RTT_DIVISOR: the threshold is the last round's minimum RTT over this (RFC 9406: 8).
    pub min_rtt_divisor: f64,
    /// N_RTT_SAMPLE: RTT samples a round needs before it is judged (RFC 9406: 8).
    pub n_rtt_sample: u32,
    /// CSS_GROWTH_DIVISOR: CSS grows the window this many times slower (RFC 9406: 4).
    pub css_growth_divisor: f64,
    /// CSS_ROUNDS: rounds of CSS before congestion avoidance (RFC 9406: 5; 0: none, Linux).
    pub css_rounds: u32,
    /// No exit while cwnd is below this many segments (RFC 9406: none; Linux: 16).
    pub min_window_pkts: f64,
}

impl Default for HystartParams {
    fn default() -> Self {
        HystartParams {
            min_rtt_thresh_ms: 4.0,
            max_rtt_thresh_ms: 16.0,
            min_rtt_divisor: 8.0,
            n_rtt_sample: 8,
            css_growth_divisor: 4.0,
            css_rounds: 5,
            min_window_pkts: 0.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    SlowStart,
    /// Conservative slow start since the RTT rose to `baseline`: `rounds` whole rounds spent in
    /// it (the round it began in does not count).
    Css {
        baseline: SimTime,
        rounds: u32,
        began_this_round: bool,
    },
    /// The first slow start is over: the variant alone decides.
    Done,
}

pub struct HyStart {
    inner: Box<dyn CongestionControl>,
    params: HystartParams,
    phase: Phase,
    /// The round ends when snd_una reaches this (RFC 9406's windowEnd).
    window_end: Option<u32>,
    last_round_min: Option<SimTime>,
    round_min: Option<SimTime>,
    samples: u32,
}

impl HyStart {
    pub fn new(inner: Box<dyn CongestionControl>, params: &HystartParams) -> Self {
        HyStart {
            inner,
            params: params.clone(),
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min: None,
            round_min: None,
            samples: 0,
        }
    }

    /// The round's RTT rose by RttThresh over the last round's (§4.2).
    fn delay_rose(&self) -> Option<SimTime> {
        let (current, last) = (self.round_min?, self.last_round_min?);
        if self.samples < self.params.n_rtt_sample {
            return None;
        }
        let p = &self.params;
        let thresh = (last as f64 / p.min_rtt_divisor)
            .min(from_millis(p.max_rtt_thresh_ms) as f64)
            .max(from_millis(p.min_rtt_thresh_ms) as f64);
        (current as f64 >= last as f64 + thresh).then_some(current)
    }

    /// Starts a new round when the ACK passes the last one's end; true if one ended.
    fn next_round(&mut self, s: &SocketState) -> bool {
        match self.window_end {
            Some(end) if s.snd_una < end => false,
            ended => {
                self.window_end = Some(s.high_tx.max(s.snd_una + 1));
                self.last_round_min = self.round_min.or(self.last_round_min);
                self.round_min = None;
                self.samples = 0;
                ended.is_some()
            }
        }
    }

    fn enter_avoidance(&mut self, s: &mut SocketState) {
        s.ssthresh = s.cwnd;
        self.phase = Phase::Done;
    }
}

impl CongestionControl for HyStart {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn recovery(&self) -> Recovery {
        self.inner.recovery()
    }

    fn on_ack(&mut self, s: &mut SocketState, acked: u32, now: SimTime) {
        // §4.3: the first slow start only; a loss (ssthresh set) ends HyStart++ for good.
        if self.phase != Phase::Done && (s.ssthresh.is_finite() || !s.in_slow_start()) {
            self.phase = Phase::Done;
        }
        if self.phase == Phase::Done {
            return self.inner.on_ack(s, acked, now);
        }
        let round_ended = self.next_round(s);
        match self.phase {
            Phase::SlowStart => {
                s.cwnd += 1.0;
                if s.cwnd >= self.params.min_window_pkts {
                    if let Some(baseline) = self.delay_rose() {
                        if self.params.css_rounds == 0 {
                            self.enter_avoidance(s);
                        } else {
                            self.phase = Phase::Css {
                                baseline,
                                rounds: 0,
                                began_this_round: true,
                            };
                        }
                    }
                }
            }
            Phase::Css {
                baseline,
                rounds,
                began_this_round,
            } => {
                s.cwnd += 1.0 / self.params.css_growth_divisor;
                let rounds = rounds + (round_ended && !began_this_round) as u32;
                let began_this_round = began_this_round && !round_ended;
                if self.samples >= self.params.n_rtt_sample && self.round_min.is_some_and(|m| m < baseline) {
                    self.phase = Phase::SlowStart; // the rise was spurious
                } else if rounds >= self.params.css_rounds {
                    self.enter_avoidance(s);
                } else {
                    self.phase = Phase::Css {
                        baseline,
                        rounds,
                        began_this_round,
                    };
                }
            }
            Phase::Done => unreachable!("handled above"),
        }
        s.cwnd = s.cwnd.min(s.max_window as f64);
    }

    fn ssthresh(&mut self, s: &SocketState, now: SimTime) -> f64 {
        self.inner.ssthresh(s, now)
    }

    /// RFC 9406 §4.3: an ECN mark, as a loss, ends slow start and CSS for good.
    fn on_ecn_echo(&mut self, s: &SocketState, now: SimTime) -> f64 {
        self.phase = Phase::Done;
        self.inner.on_ecn_echo(s, now)
    }

    fn on_ecn_ack(&mut self, s: &SocketState, acked: u32, ece: bool, now: SimTime) {
        self.inner.on_ecn_ack(s, acked, ece, now);
    }

    fn precise_ecn(&self) -> bool {
        self.inner.precise_ecn()
    }

    fn l4s(&self) -> bool {
        self.inner.l4s()
    }

    fn paces(&self) -> bool {
        self.inner.paces()
    }

    fn grows_in_cwr(&self) -> bool {
        self.inner.grows_in_cwr()
    }

    fn ecn_alpha(&self) -> Option<f64> {
        self.inner.ecn_alpha()
    }

    fn open_window(&mut self) {
        self.inner.open_window();
    }

    fn on_rtt_sample(&mut self, s: &SocketState, rtt: SimTime, now: SimTime) {
        if self.phase != Phase::Done {
            self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples += 1;
        }
        self.inner.on_rtt_sample(s, rtt, now);
    }

    fn on_timeout(&mut self, s: &mut SocketState, now: SimTime) {
        self.phase = Phase::Done;
        self.inner.on_timeout(s, now);
    }

    fn wants_rate_samples(&self) -> bool {
        self.inner.wants_rate_samples()
    }

    fn on_delivery(&mut self, s: &mut SocketState, rs: &RateSample, now: SimTime) {
        self.inner.on_delivery(s, rs, now);
    }

    fn pacing_rate(&self) -> Option<f64> {
        self.inner.pacing_rate()
    }

    fn own_slow_start(&self) -> bool {
        self.inner.own_slow_start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::build;
    use crate::scenario::TcpConfig;

    const MS: SimTime = 1_000_000;

    fn reno_with(params: HystartParams) -> (HyStart, SocketState) {
        let cc = build("newreno-sbs", &TcpConfig::default()).unwrap();
        (
            HyStart::new(cc, &params),
            SocketState::new(10.0, f64::INFINITY, 100_000),
        )
    }

    /// One round trip of ACKs, all with this RTT: each ACK acknowledges one segment and the
    /// sender sends what the window grew by plus one; the round ends where HyStart++ starts the
    /// next (the ACK of the last segment sent when this one began). Returns the ACKs.
    fn round(h: &mut HyStart, s: &mut SocketState, rtt: SimTime) -> u32 {
        if s.high_tx == 0 {
            s.high_tx = s.cwnd as u32; // the initial window is out
        }
        let start = h.window_end;
        let mut acks = 0;
        loop {
            let before = s.cwnd;
            s.snd_una += 1;
            h.on_rtt_sample(s, rtt, 0);
            h.on_ack(s, 1, 0);
            acks += 1;
            s.high_tx += 1 + (s.cwnd - before).round() as u32;
            if h.window_end != start && (start.is_some() || acks > 1) || h.phase == Phase::Done {
                return acks;
            }
        }
    }

    #[test]
    fn a_steady_rtt_keeps_plain_slow_start_one_segment_per_ack() {
        let (mut h, mut s) = reno_with(HystartParams::default());
        let mut acks = 0;
        for _ in 0..5 {
            acks += round(&mut h, &mut s, 50 * MS);
        }
        assert_eq!(s.cwnd, 10.0 + acks as f64);
        assert!(s.ssthresh.is_infinite());
    }

    #[test]
    fn a_rise_past_the_threshold_enters_css_which_grows_four_times_slower() {
        let (mut h, mut s) = reno_with(HystartParams::default());
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 50 * MS);
        // 50 ms / 8 = 6.25 ms, within [4, 16]: a rise to 55 ms does not count, then one to
        // 55 + 6.875 does (the threshold follows the last round's minimum).
        round(&mut h, &mut s, 55 * MS);
        assert_eq!(h.phase, Phase::SlowStart);
        round(&mut h, &mut s, 62 * MS);
        assert!(matches!(h.phase, Phase::Css { .. }), "{:?}", h.phase);
        let before = s.cwnd;
        let acks = round(&mut h, &mut s, 62 * MS);
        assert!(matches!(h.phase, Phase::Css { .. }), "{:?}", h.phase);
        assert!(
            (s.cwnd - before - acks as f64 / 4.0).abs() < 1e-9,
            "{before} -> {} in {acks} ACKs",
            s.cwnd
        );
    }

    #[test]
    fn after_css_rounds_in_css_congestion_avoidance_begins_at_the_window_reached() {
        let (mut h, mut s) = reno_with(HystartParams::default());
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 60 * MS);
        assert!(matches!(h.phase, Phase::Css { .. }));
        let mut rounds = 0;
        while h.phase != Phase::Done {
            round(&mut h, &mut s, 60 * MS);
            rounds += 1;
        }
        assert_eq!(rounds, 5, "CSS_ROUNDS");
        assert_eq!(s.ssthresh, s.cwnd);
    }

    #[test]
    fn a_round_back_below_the_css_baseline_returns_to_slow_start() {
        let (mut h, mut s) = reno_with(HystartParams::default());
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 60 * MS);
        assert!(matches!(h.phase, Phase::Css { .. }));
        round(&mut h, &mut s, 50 * MS);
        assert_eq!(h.phase, Phase::SlowStart);
    }

    #[test]
    fn with_no_css_rounds_slow_start_ends_at_the_rise_as_linux_does_but_not_below_its_low_window() {
        let linux = HystartParams {
            css_rounds: 0,
            min_window_pkts: 16.0,
            ..HystartParams::default()
        };
        let (mut h, mut s) = reno_with(linux);
        s.cwnd = 2.0;
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 60 * MS);
        assert_eq!(
            h.phase,
            Phase::SlowStart,
            "a window below 16 is never judged: {}",
            s.cwnd
        );
        round(&mut h, &mut s, 60 * MS);
        round(&mut h, &mut s, 70 * MS);
        assert_eq!(h.phase, Phase::Done, "cwnd {}", s.cwnd);
        assert_eq!(s.ssthresh, s.cwnd);
        assert!(s.cwnd >= 16.0);
    }

    #[test]
    fn an_ecn_echo_in_css_ends_hystart_and_returns_the_variants_reduction() {
        let (mut h, mut s) = reno_with(HystartParams::default());
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 50 * MS);
        round(&mut h, &mut s, 62 * MS);
        assert!(matches!(h.phase, Phase::Css { .. }), "{:?}", h.phase);
        let ssthresh = h.on_ecn_echo(&s, 0);
        assert_eq!(h.phase, Phase::Done);
        assert_eq!(ssthresh, s.cwnd / 2.0, "Reno's halving, through the wrapper");
    }

    #[test]
    fn once_a_loss_set_ssthresh_the_variant_alone_grows_the_window() {
        let (mut h, mut s) = reno_with(HystartParams::default());
        s.ssthresh = 20.0;
        s.cwnd = 10.0;
        h.on_ack(&mut s, 1, 0);
        assert_eq!(h.phase, Phase::Done);
        assert_eq!(s.cwnd, 11.0, "RFC 5681's slow start up to the loss's ssthresh");
    }
}
