//! A link whose rate follows a schedule (issue 18): another departure rule beside the fixed
//! rate and the trace (`TraceCursor`). A packet's bits are served at the rate in force while
//! it is sent: the transmission that starts at `t` ends at the first moment `T` with
//! ∫ₜᵀ rate(τ) dτ = bits, solved exactly on each piece (a constant, or a straight line: a
//! quadratic) and rounded up to whole nanoseconds once, at the end, as `transmission_time`
//! rounds a fixed rate's (floating-point noise below a picosecond ignored). While the rate is 0 (a blackout) nothing is sent and packets wait;
//! the scenario refuses a schedule whose last value is 0, so every packet leaves.

use crate::schedule::{Piece, Schedule};
use crate::time::{SimTime, NS_PER_SEC};

#[derive(Debug)]
pub struct ScheduledRate {
    /// Bits per second.
    rate: Schedule,
}

/// The rate at `t` within `piece`, and its slope (b/s per second) until the piece ends.
fn rate_and_slope(piece: &Piece, t: SimTime) -> (f64, f64) {
    match piece.end {
        Some((end, reached)) if reached != piece.value => {
            let slope = (reached - piece.value) / ((end - piece.start) as f64 / NS_PER_SEC);
            (piece.value + slope * ((t - piece.start) as f64 / NS_PER_SEC), slope)
        }
        _ => (piece.value, 0.0),
    }
}

/// Bits sent in `dt` seconds from a rate `r` changing by `k` per second.
fn bits_in(r: f64, k: f64, dt: f64) -> f64 {
    r * dt + 0.5 * k * dt * dt
}

impl ScheduledRate {
    /// `rate`'s values in bits per second.
    pub fn new(rate: Schedule) -> Self {
        ScheduledRate { rate }
    }

    /// The first moment at or after `t` at which the link can send: `t` unless a blackout
    /// (a rate of 0 that stays 0) holds then, else the blackout's end.
    pub fn start(&self, t: SimTime) -> SimTime {
        self.start_piece(t).0
    }

    /// `start`, and the piece that holds then.
    fn start_piece(&self, mut t: SimTime) -> (SimTime, Piece) {
        loop {
            let piece = self.rate.piece_at(t);
            let (r, k) = rate_and_slope(&piece, t);
            if r > 0.0 || k > 0.0 {
                return (t, piece);
            }
            match piece.end {
                Some((end, _)) => t = end,
                None => unreachable!("the scenario refuses a rate schedule that ends at 0"),
            }
        }
    }

    /// When a transmission of `bits` that starts at `t` has sent its last bit.
    pub fn finish(&self, t: SimTime, bits: f64) -> SimTime {
        self.finish_from(t, self.rate.piece_at(t), bits)
    }

    /// `finish`, given the piece that holds at `t`.
    fn finish_from(&self, t: SimTime, piece: Piece, bits: f64) -> SimTime {
        let (mut t, mut left, mut piece) = (t, bits, piece);
        loop {
            let (r, k) = rate_and_slope(&piece, t);
            let fits = match piece.end {
                None => true,
                Some((end, _)) => bits_in(r, k, (end - t) as f64 / NS_PER_SEC) >= left,
            };
            if fits {
                // r·x + k·x²/2 = left, in the form that stays exact as k → 0 and for k < 0.
                let x = if k == 0.0 {
                    left / r
                } else {
                    2.0 * left / (r + (r * r + 2.0 * k * left).max(0.0).sqrt())
                };
                // Rounding noise below a picosecond must not add a nanosecond.
                let done = t.saturating_add((x * NS_PER_SEC - 1e-3).ceil().max(0.0) as SimTime);
                return piece.end.map_or(done, |(end, _)| done.min(end));
            }
            let (end, _) = piece.end.expect("a last piece always fits");
            left -= bits_in(r, k, (end - t) as f64 / NS_PER_SEC);
            t = end;
            piece = self.rate.piece_at(t);
        }
    }

    /// A packet of `bytes` reaching the head of the queue at `t`: when it starts to leave and
    /// when it has left.
    pub fn send(&self, bytes: u32, t: SimTime) -> (SimTime, SimTime) {
        let (start, piece) = self.start_piece(t);
        (start, self.finish_from(start, piece, bytes as f64 * 8.0))
    }

    /// The mean rate over [from, to] (b/s): what the link could carry, for utilisation.
    pub fn mean_bps(&self, from: SimTime, to: SimTime) -> f64 {
        if to <= from {
            return self.rate.value_at(from);
        }
        let (mut t, mut bits) = (from, 0.0);
        while t < to {
            let piece = self.rate.piece_at(t);
            let (r, k) = rate_and_slope(&piece, t);
            let until = piece.end.map_or(to, |(end, _)| end.min(to));
            bits += bits_in(r, k, (until - t) as f64 / NS_PER_SEC);
            t = until;
        }
        bits / ((to - from) as f64 / NS_PER_SEC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{ScheduleShape, ScheduleSpec};
    use crate::time::{from_secs, transmission_time};

    const MS: SimTime = 1_000_000;

    /// Points in (ms, Mb/s).
    fn rate(points: &[[f64; 2]], shape: ScheduleShape) -> ScheduledRate {
        let spec = ScheduleSpec {
            points: points.iter().map(|&[ms, mbps]| [ms / 1e3, mbps]).collect(),
            shape,
        };
        ScheduledRate::new(Schedule::new(&spec, 1e6))
    }

    #[test]
    fn a_constant_schedule_sends_as_a_fixed_rate_does() {
        let r = rate(&[[0.0, 12.0]], ScheduleShape::Step);
        for bytes in [40, 1000, 1500] {
            assert_eq!(
                r.send(bytes, 5 * MS),
                (5 * MS, 5 * MS + transmission_time(bytes, 12_000_000))
            );
        }
    }

    #[test]
    fn a_packet_across_a_step_sends_its_bits_at_each_rate_in_turn() {
        // 8 Mb/s until 1 ms, then 4 Mb/s: a 1000-byte packet from 0.5 ms sends 4000 bits by
        // 1 ms and its other 4000 in 1 ms more.
        let r = rate(&[[0.0, 8.0], [1.0, 4.0]], ScheduleShape::Step);
        assert_eq!(r.send(1000, MS / 2), (MS / 2, 2 * MS));
        assert_eq!(r.send(1000, 2 * MS), (2 * MS, 4 * MS));
    }

    #[test]
    fn a_packet_on_a_ramp_is_served_by_the_integral_of_the_rate() {
        // 0 → 16 Mb/s over 2 ms: by time x (ms) the link has sent 4000·x² bits, so 8000
        // bits take √2 ms, and the next 8000 until 2 ms.
        let r = rate(&[[0.0, 0.0], [2.0, 16.0]], ScheduleShape::Linear);
        let (start, end) = r.send(1000, 0);
        assert_eq!(start, 0, "a ramp from 0 sends at once");
        assert_eq!(end, (2f64.sqrt() * 1e6).ceil() as SimTime);
        assert_eq!(r.finish(0, 16_000.0), 2 * MS);
        // Down 16 → 0 over 2 ms and up again: 16000·x − 4000·x² bits by x ms (12000 by 1
        // ms), 16000 by the bottom at 2 ms, then 4000·y² in the y ms after it.
        let v = rate(&[[0.0, 16.0], [2.0, 0.0], [4.0, 16.0]], ScheduleShape::Linear);
        assert_eq!(v.finish(0, 12_000.0), MS);
        let across = v.finish(0, 24_000.0) as f64;
        assert!((across - (2.0 + 2f64.sqrt()) * 1e6).abs() <= 1.0, "{across}");
    }

    #[test]
    fn packets_wait_through_a_blackout() {
        // 8 Mb/s, nothing from 1 ms to 3 ms, then 8 Mb/s again.
        let r = rate(&[[0.0, 8.0], [1.0, 0.0], [3.0, 8.0]], ScheduleShape::Step);
        assert_eq!(
            r.send(1000, MS / 2),
            (MS / 2, 3 * MS + MS / 2),
            "half before, half after"
        );
        assert_eq!(
            r.send(1000, 2 * MS),
            (3 * MS, 4 * MS),
            "one reaching the head in it waits"
        );
        assert_eq!(r.start(MS), 3 * MS);
    }

    #[test]
    fn the_mean_rate_integrates_steps_and_ramps() {
        let r = rate(&[[0.0, 10.0], [1000.0, 0.0], [2000.0, 20.0]], ScheduleShape::Step);
        assert_eq!(r.mean_bps(0, from_secs(2.0)), 5e6);
        assert_eq!(r.mean_bps(from_secs(1.0), from_secs(3.0)), 10e6);
        let ramp = rate(&[[0.0, 0.0], [1000.0, 10.0]], ScheduleShape::Linear);
        assert!((ramp.mean_bps(0, from_secs(1.0)) - 5e6).abs() < 1e-6);
    }
}
