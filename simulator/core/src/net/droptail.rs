use super::Verdict;

/// First in, first out; an arrival that finds `limit` packets waiting is dropped.
pub struct DropTail {
    limit: u32,
}

impl DropTail {
    pub fn new(limit: u32) -> Self {
        DropTail { limit }
    }

    pub fn admit(&self, waiting: usize) -> bool {
        waiting < self.limit as usize
    }
}

/// Drop-Tail with DCTCP's switch marking (RFC 8257 §3.1, `ecn_threshold_pkts`): an
/// ECN-capable arrival that finds `threshold` (K) or more packets waiting is accepted marked
/// CE, on the instantaneous queue, with no averaging and no randomness; a full buffer drops.
/// A queue of its own so that plain Drop-Tail's admission stays one comparison.
pub struct MarkingDropTail {
    tail: DropTail,
    threshold: u32,
    /// CE marks since the window opened.
    pub marks: u64,
}

impl MarkingDropTail {
    pub fn new(limit: u32, threshold: u32) -> Self {
        MarkingDropTail {
            tail: DropTail::new(limit),
            threshold,
            marks: 0,
        }
    }

    /// `waiting`: packets queued behind the one in service; `ect`: the arrival is ECN-capable.
    pub fn admit(&mut self, waiting: usize, ect: bool) -> Verdict {
        if !self.tail.admit(waiting) {
            Verdict::Drop
        } else if ect && waiting >= self.threshold as usize {
            self.marks += 1;
            Verdict::Mark
        } else {
            Verdict::Accept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_or_above_the_threshold_ecn_capable_arrivals_are_marked_and_others_accepted() {
        let mut q = MarkingDropTail::new(10, 4);
        assert_eq!(q.admit(3, true), Verdict::Accept);
        assert_eq!(q.admit(4, true), Verdict::Mark);
        assert_eq!(q.admit(9, true), Verdict::Mark);
        assert_eq!(q.admit(9, false), Verdict::Accept, "not ECN-capable: Drop-Tail");
        assert_eq!(q.admit(10, true), Verdict::Drop, "a full buffer drops");
        assert_eq!(q.marks, 2);
    }

    #[test]
    fn the_arrival_that_would_exceed_the_limit_is_dropped() {
        let q = DropTail::new(2);
        assert!(q.admit(0));
        assert!(q.admit(1));
        assert!(!q.admit(2));
    }
}
