//! TCP Westwood+ (Mascolo, Casetti, Gerla, Sanadidi & Wang, "TCP Westwood: Bandwidth
//! Estimation for Enhanced Transport over Wireless Links", MobiCom 2001, §2; the per-RTT
//! sampling of Westwood+: Grieco & Mascolo, ACM CCR 34(2), 2004, §2): the sender estimates the
//! bandwidth it gets from the rate of returning ACKs and, after a loss, sets ssthresh to the
//! window that bandwidth fills at the path's minimum RTT, ssthresh = BWE·RTT_min, instead of
//! halving. A loss that is not congestion (a wireless error) thus costs little window. Growth
//! is Reno's.
//!
//! The estimate: once per round trip a sample b_k = segments acknowledged in that round trip
//! over its length, filtered by MobiCom 2001's discrete Tustin low-pass filter
//! BWE_k = α·BWE_{k−1} + (1 − α)·(b_k + b_{k−1})/2 with α = 0.9 (ns-3's `TcpWestwoodPlus`
//! default `FilterType` Tustin; Linux's tcp_westwood.c uses a 7/8 EWMA).
//!
//! Choices:
//! - The round trip a sample covers is the smoothed RTT (the latest sample before the first
//!   SRTT); ns-3 waits one measured RTT from the sample's first ACK, by a timer.
//! - Only cumulative ACKs count, so segments SACKed during a recovery count when the hole
//!   below them is repaired (the original Westwood counted each duplicate ACK as a segment
//!   delivered; ns-3 counts what its cumulative ACKs acknowledge, as here). Acknowledgements
//!   reach the estimator one ACK late during a recovery (the hook sees the ACK point before
//!   the ACK moves it), which a round trip's average does not notice.
//! - After a fast recovery cwnd = ssthresh (the recovery's exit), even when BWE·RTT_min is
//!   above the window before the loss, as ns-3 and Linux do; a timeout leaves cwnd = 1 and
//!   ssthresh = BWE·RTT_min. Before any estimate, ssthresh halves the window as Reno.
//! - RFC 5681 slow start; SACK (RFC 6675) recovery, NewReno with `sack: false`.

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::{to_secs, SimTime};

/// The Tustin filter's pole: the weight of the previous estimate.
pub const ALPHA: f64 = 0.9;

pub struct Westwood {
    recovery: Recovery,
    /// BWE, segments per second, once a round trip has been sampled.
    bwe: Option<f64>,
    /// b_{k−1}, segments per second: the last unfiltered sample.
    last_sample: f64,
    /// When the round trip being sampled began, and the cumulative ACK point then.
    sample_start: Option<(SimTime, u32)>,
    /// The highest cumulative ACK point the estimator has seen.
    acked_to: u32,
    /// The latest RTT sample.
    last_rtt: Option<SimTime>,
}

impl Westwood {
    pub fn new(sack: Option<bool>) -> Self {
        Westwood {
            recovery: aimd::sack_or_newreno(sack),
            bwe: None,
            last_sample: 0.0,
            sample_start: None,
            acked_to: 0,
            last_rtt: None,
        }
    }

    /// The filter, one step: a new per-RTT sample b_k in segments per second.
    fn filter(&mut self, sample: f64) {
        let previous = self.bwe.unwrap_or(sample);
        let last = if self.bwe.is_some() { self.last_sample } else { sample };
        self.bwe = Some(ALPHA * previous + (1.0 - ALPHA) * (sample + last) / 2.0);
        self.last_sample = sample;
    }

    /// Counts what the ACK point `una` acknowledges and closes the round trip once it is over.
    fn account(&mut self, s: &SocketState, now: SimTime) {
        self.acked_to = self.acked_to.max(s.snd_una);
        let Some((start, from)) = self.sample_start else {
            self.sample_start = Some((now, self.acked_to));
            return;
        };
        let Some(rtt) = s.srtt.or(self.last_rtt) else {
            return;
        };
        if now.saturating_sub(start) >= rtt && now > start {
            let sample = (self.acked_to - from) as f64 / to_secs(now - start);
            self.filter(sample);
            self.sample_start = Some((now, self.acked_to));
        }
    }

    /// BWE·RTT_min in segments, once both are known.
    pub fn bandwidth_window(&self, min_rtt: Option<SimTime>) -> Option<f64> {
        Some(self.bwe? * to_secs(min_rtt?))
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood-plus"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_rtt_sample(&mut self, s: &SocketState, rtt: SimTime, now: SimTime) {
        self.last_rtt = Some(rtt);
        self.account(s, now);
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, now: SimTime) {
        self.account(s, now);
        aimd::increase(s);
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        match self.bandwidth_window(s.min_rtt) {
            Some(w) => w.max(2.0),
            None => (s.window_in_use() / 2.0).max(2.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// Feeds `rounds` round trips of 100 ms with `per_rtt` segments acknowledged in each.
    fn feed(cc: &mut Westwood, s: &mut SocketState, rounds: u32, per_rtt: u32) {
        s.srtt = Some(100 * MS);
        let start = s.snd_una;
        for k in 0..=rounds * per_rtt {
            s.snd_una = start + k;
            let now = (k as u64) * 100 * MS / per_rtt as u64;
            cc.on_ack(s, 1, now);
        }
    }

    #[test]
    fn after_a_loss_ssthresh_is_the_estimated_bandwidth_times_the_minimum_rtt() {
        let mut cc = Westwood::new(None);
        let mut s = SocketState::new(50.0, 1e9, 100_000);
        s.min_rtt = Some(80 * MS);
        feed(&mut cc, &mut s, 50, 50); // 500 segments a second, for 5 s
        let bwe = cc.bwe.unwrap();
        assert!((bwe - 500.0).abs() < 5.0, "{bwe}");
        let ssthresh = cc.ssthresh(&s, 0);
        assert!((ssthresh - bwe * 0.08).abs() < 1e-9, "{ssthresh}");
        assert!((ssthresh - 40.0).abs() < 0.5, "500/s · 80 ms: {ssthresh}");
    }

    #[test]
    fn the_tustin_filter_moves_a_tenth_of_the_way_to_the_mean_of_the_last_two_samples() {
        let mut cc = Westwood::new(None);
        cc.filter(100.0);
        assert_eq!(cc.bwe, Some(100.0), "the first sample is the estimate");
        cc.filter(200.0);
        assert!((cc.bwe.unwrap() - (0.9 * 100.0 + 0.1 * 150.0)).abs() < 1e-9);
        cc.filter(200.0);
        assert!((cc.bwe.unwrap() - (0.9 * 105.0 + 0.1 * 200.0)).abs() < 1e-9);
    }

    #[test]
    fn before_any_estimate_a_loss_halves_the_window() {
        let mut cc = Westwood::new(None);
        let s = SocketState::new(40.0, 1e9, 100_000);
        assert_eq!(cc.ssthresh(&s, 0), 20.0);
    }

    #[test]
    fn growth_is_renos() {
        let mut cc = Westwood::new(None);
        let mut s = SocketState::new(10.0, 5.0, 100_000);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 10.1).abs() < 1e-12);
    }
}
