//! A link's delivery opportunities from a Mahimahi trace (Winstein et al., NSDI 2013; mm-link).
//!
//! A trace file has one line per opportunity: the millisecond, from the trace's start, at
//! which one packet of up to 1500 bytes may leave the queue; a millisecond repeats for several
//! opportunities. The trace loops with a period of its last millisecond, as mm-link's does
//! (an opportunity at the last millisecond of one pass and one at 0 of the next coincide).
//! An opportunity carries 1500 bytes, as mm-link's `LinkQueue::use_a_delivery_opportunity`
//! does: packets waiting when it comes leave through it while its bytes last (forty ACKs share
//! one), a packet larger than what is left continues at the next one and leaves when its last
//! byte has gone, and bytes no waiting packet uses are lost. A trace is read once and shared
//! (`Arc`) by every link that follows it; each link keeps its own `TraceCursor`.

use std::sync::Arc;

use crate::time::SimTime;

const NS_PER_MS: SimTime = 1_000_000;
/// The bytes one opportunity carries (Mahimahi's PACKET_SIZE, less its 4-byte tunnel header).
pub const OPPORTUNITY_BYTES: u64 = 1500;

#[derive(Debug, PartialEq)]
pub struct Trace {
    /// Opportunity times in ms from the trace's start, non-decreasing.
    ms: Vec<u32>,
    /// The loop period, ns: the last opportunity's millisecond.
    period: SimTime,
}

impl Trace {
    /// Parses a trace's text; the error names the first bad line (1-based) or what is missing.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let t: u32 = line
                .parse()
                .map_err(|_| format!("line {}: expected a whole number of milliseconds, got {line:?}", i + 1))?;
            if ms.last().is_some_and(|&last| t < last) {
                return Err(format!("line {}: {t} ms is before the line above it", i + 1));
            }
            ms.push(t);
        }
        match ms.last() {
            None => Err("the trace has no delivery opportunities".into()),
            Some(0) => Err("the trace lasts 0 ms: its last opportunity must be after 0 (mm-link's rule)".into()),
            Some(&last) => Ok(Trace {
                period: last as SimTime * NS_PER_MS,
                ms,
            }),
        }
    }

    /// Reads and parses a trace file.
    pub fn read(path: &str) -> Result<Trace, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read trace file {path:?}: {e}"))?;
        Trace::parse(&text).map_err(|e| format!("trace file {path:?}: {e}"))
    }

    /// The mean capacity, bits per second: a full opportunity's bytes per period.
    pub fn mean_bps(&self) -> u64 {
        (self.ms.len() as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1_000_000_000 / self.period as u128) as u64
    }

    fn at(&self, i: usize) -> SimTime {
        self.ms[i] as SimTime * NS_PER_MS
    }
}

/// A link's position in its trace: the opportunity in use (or next), and its bytes used.
#[derive(Debug)]
pub struct TraceCursor {
    trace: Arc<Trace>,
    /// Index of the current opportunity in the current pass.
    index: usize,
    /// When the current pass started, ns.
    pass_start: SimTime,
    /// Bytes of the current opportunity already carried (always below a full one).
    used: u32,
}

impl TraceCursor {
    pub fn new(trace: Arc<Trace>) -> Self {
        TraceCursor {
            trace,
            index: 0,
            pass_start: 0,
            used: 0,
        }
    }

    fn current(&self) -> SimTime {
        self.pass_start + self.trace.at(self.index)
    }

    /// When a packet that reaches the head of the queue at `t` starts to leave: the current
    /// opportunity if it is partly used and not before `t` (the packet was waiting when it
    /// came), else the first opportunity at or after `t`. `t` never goes back between calls.
    pub fn start(&mut self, t: SimTime) -> SimTime {
        if self.used > 0 && self.current() < t {
            // The rest of an opportunity that found the queue empty is lost.
            self.take();
        }
        self.next_at_or_after(t)
    }

    /// Sends a packet of `bytes` that reaches the head at `t`: (when it starts to leave, when
    /// its last byte has left).
    pub fn send(&mut self, bytes: u32, t: SimTime) -> (SimTime, SimTime) {
        let start = self.start(t);
        let mut remaining = bytes as u64;
        loop {
            let room = OPPORTUNITY_BYTES - self.used as u64;
            let at = self.current();
            if remaining < room {
                self.used += remaining as u32;
                return (start, at);
            }
            self.take();
            remaining -= room;
            if remaining == 0 {
                return (start, at);
            }
        }
    }

    /// The first opportunity at or after `t`, from the current one; those before `t` are
    /// passed over (unused, as mm-link's are when its queue is empty).
    fn next_at_or_after(&mut self, t: SimTime) -> SimTime {
        let trace = &*self.trace;
        loop {
            let at = self.pass_start + trace.at(self.index);
            if at >= t {
                return at;
            }
            // Whole passes that end before `t`: skipped at once, not line by line.
            let behind = t - self.pass_start;
            if behind > trace.period {
                self.pass_start += (behind - 1) / trace.period * trace.period;
                self.index = 0;
                continue;
            }
            let start = self.pass_start;
            self.index += trace.ms[self.index..].partition_point(|&ms| start + ms as SimTime * NS_PER_MS < t);
            if self.index == trace.ms.len() {
                self.index = 0;
                self.pass_start += trace.period;
            }
        }
    }

    /// Moves to the next opportunity, with nothing of it used.
    fn take(&mut self) {
        self.used = 0;
        self.index += 1;
        if self.index == self.trace.ms.len() {
            self.index = 0;
            self.pass_start += self.trace.period;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(text: &str) -> TraceCursor {
        TraceCursor::new(Arc::new(Trace::parse(text).unwrap()))
    }

    /// Departure times (ms) of `n` full-size packets all waiting from `t` ns.
    fn drain(c: &mut TraceCursor, t: SimTime, n: usize) -> Vec<SimTime> {
        (0..n).map(|_| c.send(1500, t).1 / NS_PER_MS).collect()
    }

    #[test]
    fn a_backlogged_cursor_uses_every_opportunity_and_loops_with_the_last_millisecond_as_period() {
        let mut c = cursor("1\n1\n3\n4\n");
        assert_eq!(drain(&mut c, 0, 9), [1, 1, 3, 4, 5, 5, 7, 8, 9]);
    }

    #[test]
    fn opportunities_before_the_packet_are_passed_over_unused() {
        let mut c = cursor("1\n2\n2\n5\n");
        assert_eq!(drain(&mut c, 2 * NS_PER_MS, 2), [2, 2]);
        // 2.5 ms: the next is at 5; then from 5.000001 ms the next pass's 1 (at 6).
        assert_eq!(drain(&mut c, 2_500_000, 1), [5]);
        assert_eq!(drain(&mut c, 5_000_001, 1), [6]);
        assert_eq!(c.start(7_000_000), 7_000_000);
    }

    #[test]
    fn a_long_idle_period_skips_whole_passes_to_the_right_opportunity() {
        let mut c = cursor("0\n3\n10\n");
        // Pass k spans [10k, 10k + 10]; 1003 ms falls in pass 100 (1000 + 3).
        assert_eq!(drain(&mut c, 1003 * NS_PER_MS, 3), [1003, 1010, 1010]);
        // The last opportunity of a pass and the first of the next coincide; from exactly the
        // end of a pass the earlier pass's last opportunity is still there.
        let mut c = cursor("0\n3\n10\n");
        assert_eq!(drain(&mut c, 20 * NS_PER_MS, 2), [20, 20]);
    }

    #[test]
    fn small_packets_waiting_share_an_opportunity_and_a_large_one_spans_two() {
        let mut c = cursor("1\n2\n4\n");
        // Waiting from 0: 1000 + 500 bytes fill the opportunity at 1 ms; 1000 + 1000 need the
        // one at 2 ms for the second's last 500 bytes.
        assert_eq!(c.send(1000, 0), (1_000_000, 1_000_000));
        assert_eq!(c.send(500, 0), (1_000_000, 1_000_000));
        assert_eq!(c.send(1000, 0), (2_000_000, 2_000_000));
        assert_eq!(c.send(1000, 0), (2_000_000, 4_000_000));
        // 500 bytes of the opportunity at 4 ms are left, but a packet arriving after it finds
        // them gone: the next pass's first opportunity (5 ms) carries it.
        assert_eq!(c.send(40, 4_000_001), (5_000_000, 5_000_000));
        // ACKs waiting at 5 ms share it: 37 fit in 1500 bytes, the 38th ends at the next.
        for _ in 0..36 {
            assert_eq!(c.send(40, 5_000_000).1, 5_000_000);
        }
        assert_eq!(c.send(40, 5_000_000), (5_000_000, 6_000_000));
    }

    #[test]
    fn the_mean_rate_is_a_full_packet_per_opportunity_over_the_period() {
        let t = Trace::parse("1\n1\n2\n3\n4\n").unwrap(); // 5 opportunities in 4 ms
        assert_eq!(t.mean_bps(), 5 * 1500 * 8 * 1000 / 4);
    }

    #[test]
    fn malformed_empty_and_zero_length_traces_are_refused_with_the_line() {
        assert_eq!(
            Trace::parse("1\n2\nx\n").unwrap_err(),
            "line 3: expected a whole number of milliseconds, got \"x\""
        );
        assert_eq!(Trace::parse("1\n-2\n").unwrap_err().split(':').next(), Some("line 2"));
        assert_eq!(
            Trace::parse("5\n4\n").unwrap_err(),
            "line 2: 4 ms is before the line above it"
        );
        assert_eq!(
            Trace::parse("\n\n").unwrap_err(),
            "the trace has no delivery opportunities"
        );
        assert!(Trace::parse("0\n0\n").unwrap_err().contains("lasts 0 ms"));
        assert!(Trace::read("/nonexistent/x.down")
            .unwrap_err()
            .starts_with("cannot read trace file"));
    }
}
