//! TCP-LP, Low Priority (Kuzmanovic & Knightly, "TCP-LP: A Distributed Algorithm for Low
//! Priority Data Transfer", IEEE INFOCOM 2003, §III): Reno that also backs off on an *early*
//! congestion indication, a smoothed delay above d_min + δ·(d_max − d_min) with δ = 0.15 of
//! the range it has seen, so it yields to standard TCP before the queue overflows (§III-B).
//! The first indication halves the window and opens an inference time-out of three round
//! trips; a second one inside it takes the window to one segment; no additive increase is made
//! inside it (§III-C).
//!
//! Choices (ns-3.44's `TcpLp`, after Linux's tcp_lp.c; both fix δ at 15 % and the time-out at
//! 3 RTTs, `LpParams` makes them knobs):
//! - **Delay is the RTT, not the one-way delay** (tcpsim has no receiver clock; the paper and
//!   ns-3 use timestamps, ns-3 TSval − TSecr in whole milliseconds). Against d_min it is the
//!   same queueing whenever the ACK path does not queue, as in a dumbbell.
//! - The smoothed delay is a 7/8 EWMA of the samples, the first taken whole; d_max lags one
//!   sample behind the largest (a reserve, so one outlier does not widen the range); after an
//!   indication the range is reset to [smoothed, 2·smoothed], as ns-3 and Linux do. The
//!   inference time-out is three times the latest RTT (ns-3: 3·(now − TSecr) of the ACK).
//! - Indications are acted on at ACKs outside loss recovery (the hook that may set cwnd); ns-3
//!   tests at every ACK of new data (`PktsAcked`), recovery included. ssthresh is left alone, so
//!   a window cut below it slow-starts back (ns-3, Linux). The ACK that cuts the window does
//!   not also grow it (ns-3 still adds its increase after the cut).
//! - Inside the inference time-out congestion avoidance makes no increase, slow start still
//!   does (ns-3 overrides only `CongestionAvoidance`); Linux's tcp_lp skips the whole Reno
//!   step, slow start included.
//! - Losses are Reno's (halving). RFC 5681 slow start; SACK (RFC 6675) recovery, NewReno with
//!   `sack: false`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// TCP-LP's two knobs, a flow's `tcp.lp` (`{"threshold": 0.15, "inference_rtts": 3}`); the
/// defaults are the paper's and the constants of ns-3.44's `TcpLp` and Linux's tcp_lp.c.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LpParams {
    /// δ, in (0, 1): the fraction of the delay range above d_min that signals early
    /// congestion (§III-B: 0.15).
    pub threshold: f64,
    /// The inference time-out, in round trips (§III-C: 3).
    pub inference_rtts: f64,
}

impl Default for LpParams {
    fn default() -> Self {
        LpParams {
            threshold: 0.15,
            inference_rtts: 3.0,
        }
    }
}

pub struct Lp {
    recovery: Recovery,
    p: LpParams,
    /// The smoothed delay, the least and the largest (with its reserve), nanoseconds.
    smoothed: Option<f64>,
    min: f64,
    max: f64,
    max_reserve: f64,
    /// The latest RTT sample.
    last_rtt: Option<SimTime>,
    /// When the window was last cut for an early indication.
    last_cut: Option<SimTime>,
}

impl Lp {
    pub fn new(p: &LpParams, sack: Option<bool>) -> Self {
        Lp {
            recovery: aimd::sack_or_newreno(sack),
            p: p.clone(),
            smoothed: None,
            min: f64::INFINITY,
            max: 0.0,
            max_reserve: 0.0,
            last_rtt: None,
            last_cut: None,
        }
    }

    /// §III-B: the smoothed delay is past d_min + δ·(d_max − d_min).
    pub fn early_congestion(&self) -> bool {
        self.smoothed
            .is_some_and(|d| d > self.min + self.p.threshold * (self.max - self.min))
    }

    fn within_inference(&self, now: SimTime) -> bool {
        match (self.last_cut, self.last_rtt) {
            (Some(cut), Some(rtt)) => (now.saturating_sub(cut) as f64) < self.p.inference_rtts * rtt as f64,
            _ => false,
        }
    }
}

impl CongestionControl for Lp {
    fn name(&self) -> &'static str {
        "lp"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_rtt_sample(&mut self, _s: &SocketState, rtt: SimTime, _now: SimTime) {
        let d = rtt as f64;
        self.last_rtt = Some(rtt);
        self.min = self.min.min(d);
        if d > self.max {
            // One sample above the reserve only moves the reserve up; the range widens to it
            // at the next.
            if d > self.max_reserve {
                self.max = if self.max_reserve == 0.0 { d } else { self.max_reserve };
                self.max_reserve = d;
            } else {
                self.max = d;
            }
        }
        self.smoothed = Some(self.smoothed.map_or(d, |sm| sm + (d - sm) / 8.0));
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, now: SimTime) {
        let within = self.within_inference(now);
        if self.early_congestion() {
            let sm = self.smoothed.expect("an indication needs a delay");
            (self.min, self.max, self.max_reserve) = (sm, 2.0 * sm, 2.0 * sm);
            // §III-C: a second indication within the inference time-out: one segment.
            s.cwnd = if within { 1.0 } else { (s.cwnd / 2.0).max(1.0) };
            self.last_cut = Some(now);
            return;
        }
        if s.in_slow_start() {
            aimd::increase(s);
        } else if !within {
            aimd::increase(s); // no additive increase inside the inference time-out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    fn with_range(min_ms: u64, max_ms: u64) -> (Lp, SocketState) {
        let mut cc = Lp::new(&LpParams::default(), None);
        let s = SocketState::new(40.0, 10.0, 10_000);
        cc.on_rtt_sample(&s, min_ms * MS, 0);
        cc.on_rtt_sample(&s, max_ms * MS, 0);
        cc.on_rtt_sample(&s, max_ms * MS, 0);
        cc.smoothed = Some(min_ms as f64 * MS as f64);
        (cc, s)
    }

    #[test]
    fn a_smoothed_delay_past_fifteen_percent_of_the_range_is_early_congestion() {
        let (mut cc, _) = with_range(100, 200);
        assert_eq!((cc.min, cc.max), (100e6, 200e6));
        cc.smoothed = Some(114e6);
        assert!(!cc.early_congestion());
        cc.smoothed = Some(116e6);
        assert!(cc.early_congestion());
    }

    #[test]
    fn the_first_indication_halves_the_window_and_a_second_within_three_rtts_takes_it_to_one() {
        let (mut cc, mut s) = with_range(100, 200);
        cc.smoothed = Some(150e6);
        cc.on_ack(&mut s, 1, 1000 * MS);
        assert_eq!(s.cwnd, 20.0);
        assert_eq!((cc.min, cc.max), (150e6, 300e6), "the range starts again");
        cc.smoothed = Some(200e6);
        cc.on_ack(&mut s, 1, 1100 * MS); // 100 ms later, inside 3 · 200 ms
        assert_eq!(s.cwnd, 1.0);
    }

    #[test]
    fn inside_the_inference_time_out_the_window_does_not_grow_and_after_it_grows_as_reno() {
        let (mut cc, mut s) = with_range(100, 200);
        cc.smoothed = Some(150e6);
        cc.on_ack(&mut s, 1, 1000 * MS); // cut to 20 at t = 1 s; inference 600 ms
        cc.smoothed = Some(150e6);
        cc.on_ack(&mut s, 1, 1300 * MS);
        assert_eq!(s.cwnd, 20.0);
        cc.on_ack(&mut s, 1, 1700 * MS);
        assert!((s.cwnd - 20.05).abs() < 1e-12, "{}", s.cwnd);
    }

    #[test]
    fn a_single_outlier_moves_only_the_reserve() {
        let mut cc = Lp::new(&LpParams::default(), None);
        let s = SocketState::new(40.0, 10.0, 10_000);
        for rtt in [100, 120, 300] {
            cc.on_rtt_sample(&s, rtt * MS, 0);
        }
        assert_eq!((cc.max, cc.max_reserve), (120e6, 300e6));
    }
}
