//! HighSpeed TCP (Floyd, RFC 3649): above Low_Window segments a larger window grows faster and
//! backs off less. In congestion avoidance each ACK adds a(w)/w (§5), a congestion event leaves
//! (1 − b(w))·w (§5); at or below Low_Window, a(w) = 1 and b(w) = 0.5, Standard TCP.
//!
//! a(w) and b(w) are computed from the RFC's formulas (§5), not looked up in its Table 1 (whose
//! rows are where a(w) reaches each integer, rounded to two digits in b):
//! - b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)/(log High_Window − log Low_Window) + 0.5
//! - p(w) = Low_P·(w/Low_Window)^(1/S), S = (log High_Window − log Low_Window)/(log High_P −
//!   log Low_P) ≈ −0.835: the response function w = 0.12/p^0.835 through (Low_Window, Low_P)
//!   and (High_Window, High_P)
//! - a(w) = w²·p(w)·2·b(w)/(2 − b(w))
//!
//! Choices:
//! - ns-3's `TcpHighSpeed` (and Linux's tcp_highspeed.c) use the RFC's table as integer steps
//!   of a(w) (1, 2, …, 73) and b(w) to two digits; tcpsim's a(w) is the formula's real value,
//!   so between two rows the window grows a little faster than ns-3's (by less than one step
//!   of a up to w ≈ 10,000; around w = 50,000 the formula's a(w) is up to 1.5 above the
//!   table's, e.g. 62.4 at the row that says 61). Above High_Window both hold a and b at their
//!   High_Window values (72.5 and 0.1; ns-3's last row is 73 and 0.09).
//! - ns-3 computes the reduction from bytes in flight; tcpsim from the window in use, as for
//!   every other variant (the two agree outside fast recovery).
//! - Slow start is RFC 5681's (RFC 3742's Limited Slow-Start is a separate RFC, off in ns-3
//!   too); recovery is RFC 6675 SACK, or NewReno with `sack: false`.

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// §5: at or below this window (segments) HighSpeed TCP is Standard TCP.
pub const LOW_WINDOW: f64 = 38.0;
/// §5: the window (segments) at which the response function reaches High_P.
pub const HIGH_WINDOW: f64 = 83_000.0;
/// §5: the loss rate that sustains High_Window.
pub const HIGH_P: f64 = 1e-7;
/// §5: Standard TCP's loss rate at Low_Window (w = 1.2/√p gives 0.001 at w = 38).
pub const LOW_P: f64 = 1e-3;
/// §5: b(High_Window).
pub const HIGH_DECREASE: f64 = 0.1;

/// Where w sits between Low_Window and High_Window on a log scale, 0 to 1.
fn log_position(w: f64) -> f64 {
    let w = w.clamp(LOW_WINDOW, HIGH_WINDOW);
    (w.ln() - LOW_WINDOW.ln()) / (HIGH_WINDOW.ln() - LOW_WINDOW.ln())
}

/// §5: the decrease factor: the window keeps 1 − b(w) of itself after a congestion event.
pub fn b(w: f64) -> f64 {
    (HIGH_DECREASE - 0.5) * log_position(w) + 0.5
}

/// §5: the loss rate of the HighSpeed response function at window w.
pub fn p(w: f64) -> f64 {
    // log p interpolates between log Low_P and log High_P as log w does between the windows.
    (LOW_P.ln() + log_position(w) * (HIGH_P.ln() - LOW_P.ln())).exp()
}

/// §5: the increase, in segments per round trip, at window w (1 at or below Low_Window).
pub fn a(w: f64) -> f64 {
    if w <= LOW_WINDOW {
        return 1.0;
    }
    let w = w.min(HIGH_WINDOW);
    let b = b(w);
    (w * w * p(w) * 2.0 * b / (2.0 - b)).max(1.0)
}

pub struct HighSpeed {
    recovery: Recovery,
}

impl HighSpeed {
    pub fn new(sack: Option<bool>) -> Self {
        HighSpeed {
            recovery: aimd::sack_or_newreno(sack),
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        // §5: w = w + a(w)/w per ACK in congestion avoidance.
        aimd::increase_by(s, a(s.cwnd));
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        // §5: w = (1 − b(w))·w on a congestion event.
        let w = s.window_in_use();
        ((1.0 - b(w)) * w).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_high_window_the_increase_is_72_and_the_decrease_a_tenth_as_rfc_3649_table_1_says() {
        assert_eq!(a(83_000.0).floor(), 72.0, "{}", a(83_000.0));
        assert!((b(83_000.0) - 0.1).abs() < 1e-12);
        assert!((p(83_000.0) - 1e-7).abs() < 1e-15);
    }

    #[test]
    fn the_formulas_reach_each_integer_increase_at_the_windows_of_table_1() {
        // RFC 3649 Table 1's rows (w, a(w), b(w)): a(w) reaches the integer at about w.
        for (w, a_w, b_w) in [
            (118.0, 2.0, 0.44),
            (221.0, 3.0, 0.41),
            (347.0, 4.0, 0.38),
            (495.0, 5.0, 0.37),
            (1058.0, 8.0, 0.33),
            (10661.0, 30.0, 0.21),
        ] {
            assert!((a(w) - a_w).abs() < 0.7, "a({w}) = {}", a(w));
            assert!((b(w) - b_w).abs() < 0.006, "b({w}) = {}", b(w));
        }
    }

    #[test]
    fn at_or_below_the_low_window_it_is_standard_tcp() {
        assert_eq!((a(38.0), b(38.0)), (1.0, 0.5));
        assert_eq!((a(10.0), b(10.0)), (1.0, 0.5));
        let mut cc = HighSpeed::new(None);
        let mut s = SocketState::new(20.0, 10.0, 100_000);
        assert_eq!(cc.ssthresh(&s, 0), 10.0);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 20.05).abs() < 1e-12, "+1/w: {}", s.cwnd);
    }

    #[test]
    fn a_large_window_grows_by_a_of_w_per_round_trip_and_keeps_one_minus_b_of_w_after_a_loss() {
        let mut cc = HighSpeed::new(None);
        let mut s = SocketState::new(1000.0, 500.0, 100_000);
        let expected = 1000.0 + a(1000.0);
        for _ in 0..1000 {
            cc.on_ack(&mut s, 1, 0);
        }
        assert!((s.cwnd - expected).abs() < 0.05, "{} vs {expected}", s.cwnd);
        assert!(a(1000.0) > 7.0, "{}", a(1000.0));
        let s = SocketState::new(1000.0, 500.0, 100_000);
        let ssthresh = cc.ssthresh(&s, 0);
        assert!((ssthresh - 1000.0 * (1.0 - b(1000.0))).abs() < 1e-9);
        assert!((0.66..0.68).contains(&(ssthresh / 1000.0)), "{ssthresh}");
    }

    #[test]
    fn above_the_high_window_a_and_b_hold_their_last_values() {
        assert_eq!(a(200_000.0), a(83_000.0));
        assert_eq!(b(200_000.0), b(83_000.0));
    }
}
