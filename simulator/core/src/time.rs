//! Simulated time: integer nanoseconds, so event order never depends on float rounding.

/// A point in simulated time, in nanoseconds since the start of the run.
pub type SimTime = u64;

pub const NS_PER_SEC: f64 = 1e9;

/// Converts seconds (validated finite and non-negative by the scenario) to nanoseconds.
pub fn from_secs(s: f64) -> SimTime {
    (s * NS_PER_SEC).round() as SimTime
}

pub fn from_millis(ms: f64) -> SimTime {
    (ms * 1e6).round() as SimTime
}

pub fn to_secs(t: SimTime) -> f64 {
    t as f64 / NS_PER_SEC
}

/// Serialisation time of `bytes` on a link of `rate_bps`, rounded up to whole nanoseconds.
/// Packets are small, so 64-bit arithmetic almost always suffices; the 128-bit division it
/// avoids was a tenth of the reference benchmark's time (perf, before this change).
pub fn transmission_time(bytes: u32, rate_bps: u64) -> SimTime {
    match (bytes as u64).checked_mul(8_000_000_000) {
        Some(bit_ns) => bit_ns.div_ceil(rate_bps),
        None => (bytes as u128 * 8_000_000_000).div_ceil(rate_bps as u128) as SimTime,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1000_byte_packet_takes_8_microseconds_at_1_gbps() {
        assert_eq!(transmission_time(1000, 1_000_000_000), 8_000);
    }

    #[test]
    fn transmission_time_rounds_up_so_a_link_never_exceeds_its_rate() {
        assert_eq!(transmission_time(1, 3), 2_666_666_667);
    }

    #[test]
    fn huge_packets_fall_back_to_wide_arithmetic() {
        assert_eq!(transmission_time(u32::MAX, 8_000_000_000), u32::MAX as u64);
    }

    #[test]
    fn seconds_round_trip_through_nanoseconds() {
        assert_eq!(from_secs(0.07), 70_000_000);
        assert_eq!(to_secs(from_millis(12.5)), 0.0125);
    }
}
