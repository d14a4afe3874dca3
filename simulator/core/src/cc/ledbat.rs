//! LEDBAT, Low Extra Delay Background Transport (RFC 6817): a scavenger that keeps the
//! queueing delay it adds near a target and yields to standard TCP. Per ACK in congestion
//! avoidance (§2.4.2):
//! off_target = (TARGET − queuing_delay)/TARGET, cwnd += GAIN · off_target · acked/cwnd, never
//! above what is in flight plus ALLOWED_INCREASE and never below MIN_CWND; a loss halves the
//! window (once per window: the loss recovery's), a timeout leaves one segment.
//! queuing_delay = FILTER(current delays) − min(base delays): the lowest of the last
//! CURRENT_FILTER samples above the lowest delay of the last BASE_HISTORY minutes, each minute
//! keeping its own minimum (§2.4.2, §3.1.1), so a route change is forgotten in 10 minutes.
//!
//! Constants are the RFC's (and ns-3.44's `TcpLedbat` defaults): TARGET 100 ms (the most §3.2
//! allows), GAIN 1, BASE_HISTORY 10, CURRENT_FILTER 4, ALLOWED_INCREASE 1, MIN_CWND 2.
//!
//! Choices:
//! - **Delay is the round-trip time, not the one-way delay.** tcpsim's segments carry only
//!   the sender's timestamp, echoed back, so there is no receiver clock to subtract (RFC 6817
//!   §2.3 measures one-way delay; ns-3 takes TSval − TSecr of the ACK). Against the base the
//!   difference is the same queueing delay whenever the ACK path does not queue (the
//!   dumbbell's reverse direction carries only ACKs); a congested ACK path would count as
//!   queueing here and slow LEDBAT down, where RFC 6817's one-way delay would not.
//! - Slow start, as ns-3 by default (`SSParam` yes): while cwnd < ssthresh and only until
//!   congestion avoidance first begins, again after a timeout (cwnd back to one segment).
//!   RFC 6817 leaves slow start to the implementation. Once in congestion avoidance, a window
//!   that falls below ssthresh lowers ssthresh with it, so no slow start follows a decrease
//!   (ns-3).
//! - SACK (RFC 6675) recovery, NewReno with `sack: false`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::{from_secs, to_secs, SimTime};

/// LEDBAT's two knobs, a flow's `tcp.ledbat` (`{"target_ms": 100, "gain": 1}`); the defaults
/// are the RFC's and ns-3.44's `TcpLedbat` (`TargetDelay`, `Gain`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LedbatParams {
    /// TARGET, milliseconds: the queueing delay LEDBAT aims to add (§3.2: at most 100 ms).
    pub target_ms: f64,
    /// GAIN: how fast the window follows the distance to the target (§3.2: at most 1).
    pub gain: f64,
}

impl Default for LedbatParams {
    fn default() -> Self {
        LedbatParams {
            target_ms: 100.0,
            gain: 1.0,
        }
    }
}
/// BASE_HISTORY: minutes of per-minute minima the base delay is the lowest of.
pub const BASE_HISTORY: usize = 10;
/// CURRENT_FILTER: the current delay is the lowest of this many latest samples.
pub const CURRENT_FILTER: usize = 4;
/// ALLOWED_INCREASE, segments: cwnd never exceeds what is in flight plus this.
pub const ALLOWED_INCREASE: f64 = 1.0;
/// MIN_CWND, segments.
pub const MIN_CWND: f64 = 2.0;

pub struct Ledbat {
    recovery: Recovery,
    /// TARGET, seconds, and GAIN (`LedbatParams`).
    target_s: f64,
    gain: f64,
    /// The latest delay samples, oldest first (at most CURRENT_FILTER).
    current: Vec<SimTime>,
    /// (minute, lowest delay in it), oldest first (at most BASE_HISTORY).
    base: Vec<(u64, SimTime)>,
    /// Slow start is allowed: from the start, and after a timeout, until avoidance begins.
    may_slow_start: bool,
}

impl Ledbat {
    pub fn new(p: &LedbatParams, sack: Option<bool>) -> Self {
        Ledbat {
            recovery: aimd::sack_or_newreno(sack),
            target_s: p.target_ms / 1e3,
            gain: p.gain,
            current: Vec::with_capacity(CURRENT_FILTER),
            base: Vec::with_capacity(BASE_HISTORY),
            may_slow_start: true,
        }
    }

    /// §2.4.2, update_current_delay and update_base_delay, for one delay sample at `now`.
    fn add_delay(&mut self, delay: SimTime, now: SimTime) {
        if self.current.len() == CURRENT_FILTER {
            self.current.remove(0);
        }
        self.current.push(delay);
        let minute = now / from_secs(60.0);
        match self.base.last_mut() {
            Some((m, lowest)) if *m == minute => *lowest = (*lowest).min(delay),
            _ => {
                if self.base.len() == BASE_HISTORY {
                    self.base.remove(0);
                }
                self.base.push((minute, delay));
            }
        }
    }

    /// Seconds of queueing delay: FILTER(current delays) − min(base delays); None before any.
    pub fn queuing_delay(&self) -> Option<f64> {
        let current = self.current.iter().min()?;
        let base = self.base.iter().map(|b| b.1).min()?;
        Some(to_secs(*current) - to_secs(base))
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_rtt_sample(&mut self, _s: &SocketState, rtt: SimTime, now: SimTime) {
        self.add_delay(rtt, now);
    }

    fn on_ack(&mut self, s: &mut SocketState, acked: u32, _now: SimTime) {
        if s.cwnd <= 1.0 {
            self.may_slow_start = true;
        }
        if self.may_slow_start && s.in_slow_start() {
            aimd::increase(s);
            return;
        }
        self.may_slow_start = false;
        let Some(queuing_delay) = self.queuing_delay() else {
            aimd::increase(s);
            return;
        };
        let off_target = (self.target_s - queuing_delay) / self.target_s;
        s.cwnd += self.gain * off_target * acked as f64 / s.cwnd;
        let max_allowed = (s.flight() + acked) as f64 + ALLOWED_INCREASE;
        s.cwnd = s.cwnd.min(max_allowed).max(MIN_CWND).min(s.max_window as f64);
        // No slow start after a decrease (ns-3's `m_ssThresh = cWnd − 1`).
        if s.cwnd <= s.ssthresh {
            s.ssthresh = s.cwnd - 1.0;
        }
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        // §2.4.2: cwnd = max(cwnd/2, MIN_CWND) on a loss.
        (s.window_in_use() / 2.0).max(MIN_CWND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    fn in_avoidance(cwnd: f64) -> (Ledbat, SocketState) {
        let mut cc = Ledbat::new(&LedbatParams::default(), None);
        cc.may_slow_start = false;
        let mut s = SocketState::new(cwnd, 1.0, 10_000);
        s.snd_nxt = 1000;
        (cc, s)
    }

    #[test]
    fn at_the_target_delay_the_window_holds_below_it_grows_and_above_it_shrinks() {
        for (rtt_ms, change) in [(200, 0.0), (100, 1.0 / 50.0), (250, -0.5 / 50.0)] {
            let (mut cc, mut s) = in_avoidance(50.0);
            cc.on_rtt_sample(&s, 100 * MS, 0); // base: 100 ms
            for _ in 0..CURRENT_FILTER {
                cc.on_rtt_sample(&s, rtt_ms * MS, 0);
            }
            cc.on_ack(&mut s, 1, 0);
            assert!(
                (s.cwnd - 50.0 - change).abs() < 1e-12,
                "queueing {} ms: {}",
                rtt_ms - 100,
                s.cwnd
            );
        }
    }

    #[test]
    fn the_current_delay_is_the_lowest_of_the_last_four_samples() {
        let (mut cc, s) = in_avoidance(50.0);
        for rtt in [100, 150, 160, 170, 180] {
            cc.on_rtt_sample(&s, rtt * MS, 0);
        }
        let q = cc.queuing_delay().unwrap();
        assert!((q - 0.05).abs() < 1e-12, "150 − 100 ms: {q}");
    }

    #[test]
    fn the_base_delay_forgets_a_minimum_older_than_ten_minutes() {
        let (mut cc, s) = in_avoidance(50.0);
        cc.on_rtt_sample(&s, 50 * MS, 0);
        for minute in 1..=10u64 {
            cc.on_rtt_sample(&s, 100 * MS, minute * 60_000 * MS);
        }
        let q = cc.queuing_delay().unwrap();
        assert!(q.abs() < 1e-12, "the 50 ms of minute 0 is gone: {q}");
    }

    #[test]
    fn the_window_never_passes_the_flight_plus_one_nor_falls_below_two() {
        let (mut cc, mut s) = in_avoidance(50.0);
        s.snd_una = 990; // 10 in flight
        cc.on_rtt_sample(&s, 100 * MS, 0);
        cc.on_ack(&mut s, 1, 0);
        assert_eq!(s.cwnd, 12.0, "10 in flight + 1 acknowledged + 1");
        let (mut cc, mut s) = in_avoidance(2.0);
        cc.on_rtt_sample(&s, 100 * MS, 0);
        cc.on_rtt_sample(&s, 1000 * MS, 0);
        for _ in 0..CURRENT_FILTER {
            cc.on_rtt_sample(&s, 1000 * MS, 0);
        }
        cc.on_ack(&mut s, 1, 0);
        assert_eq!(s.cwnd, MIN_CWND);
    }

    #[test]
    fn a_loss_halves_the_window_but_keeps_two_segments() {
        let (mut cc, s) = in_avoidance(50.0);
        assert_eq!(cc.ssthresh(&s, 0), 25.0);
        let (mut cc, s) = in_avoidance(3.0);
        assert_eq!(cc.ssthresh(&s, 0), 2.0);
    }
}
