use super::flow_slot;

/// Drops chosen data packets of each flow: numbered 1, 2, 3, … in the order they reach the
/// module, retransmissions included. With no retransmission before the first listed drop,
/// packet n is the first transmission of segment n - 1 (paper 004's one- and two-loss cases).
pub struct Scheduled {
    /// Sorted, deduplicated packet numbers.
    packets: Vec<u64>,
    seen: Vec<u64>,
}

impl Scheduled {
    pub fn new(packets: &[u64]) -> Self {
        let mut packets = packets.to_vec();
        packets.sort_unstable();
        packets.dedup();
        Scheduled {
            packets,
            seen: Vec::new(),
        }
    }

    pub fn drops(&mut self, flow: u32) -> bool {
        let seen = flow_slot(&mut self.seen, flow);
        *seen += 1;
        self.packets.binary_search(seen).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_listed_packets_are_dropped_per_flow() {
        let mut m = Scheduled::new(&[3, 1, 3]);
        let flow0: Vec<bool> = (0..4).map(|_| m.drops(0)).collect();
        assert_eq!(flow0, vec![true, false, true, false]);
        assert!(m.drops(1), "flow 1 counts its own packets");
    }
}
