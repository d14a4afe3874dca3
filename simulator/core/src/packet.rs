//! Packets. A packet is a small `Copy` value held by the link that carries it (see
//! `net::link`), from the moment a host sends it until it is delivered or dropped.

use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// A TCP data segment, sender to receiver.
    Data,
    /// A TCP acknowledgement, receiver to sender.
    Ack,
    /// A UDP datagram (CBR traffic).
    Datagram,
    /// An HTTP request, client (receiver side) to server (sender side).
    Request,
}

/// Up to three SACK blocks, as fit in the TCP option space with timestamps (RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 3;

/// Half-open range of segment numbers [start, end).
pub type SeqRange = (u32, u32);

/// ECN bits of a packet (RFC 3168), in `Packet::ecn`: the IP codepoint of a data segment
/// (Not-ECT is none of them; CE is kept beside ECT so a marked packet stays ECN-capable at
/// the next queue, as the codepoint 11 does) and the TCP header's ECE and CWR flags.
pub mod ecn {
    /// ECT(0): the sender is ECN-capable (§5); a queue may mark it instead of dropping it.
    pub const ECT0: u8 = 1;
    /// CE: a queue marked it, congestion experienced (§5).
    pub const CE: u8 = 2;
    /// ECE on an ACK: the receiver saw CE and echoes it until it sees CWR (§6.1.3).
    pub const ECE: u8 = 4;
    /// CWR on a data segment: the sender reduced its window (§6.1.2).
    pub const CWR: u8 = 8;
    /// ECT(1): the L4S identifier (RFC 9331 §4.1), sent by a flow with `tcp.l4s`; a dual-queue
    /// AQM (RFC 9332) classifies it, and CE, into its low-latency queue.
    pub const ECT1: u8 = 16;
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub kind: PacketKind,
    /// Index of the next link on the flow's path (forward for Data/Datagram, reverse otherwise).
    pub hop: u16,
    /// Transfer number within the flow: segments of an earlier HTTP response are ignored.
    pub epoch: u32,
    /// Data: segment number. Ack: cumulative ACK (next segment expected).
    pub seq: u32,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Data: when this transmission left the sender. Ack: echo of the segment that caused it.
    pub timestamp: SimTime,
    pub retransmission: bool,
    /// `ecn` bits: one byte that fits in the padding (a packet stays 56 bytes).
    pub ecn: u8,
    pub sack_len: u8,
    pub sack: [SeqRange; MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn new(flow: u32, kind: PacketKind, epoch: u32, seq: u32, size: u32, now: SimTime) -> Self {
        Packet {
            flow,
            kind,
            hop: 0,
            epoch,
            seq,
            size,
            timestamp: now,
            retransmission: false,
            ecn: 0,
            sack_len: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    pub fn sack_blocks(&self) -> &[SeqRange] {
        &self.sack[..self.sack_len as usize]
    }

    pub fn has(&self, bits: u8) -> bool {
        self.ecn & bits != 0
    }

    /// ECT(0), ECT(1) or CE: a queue may mark it instead of dropping it.
    pub fn ecn_capable(&self) -> bool {
        self.has(ecn::ECT0 | ecn::ECT1 | ecn::CE)
    }

    /// A queue marks CE (RFC 3168 §5) where it would drop: true if the packet is ECN-capable
    /// (and now marked), false if it must be dropped instead.
    pub fn mark_ce(&mut self) -> bool {
        let capable = self.ecn_capable();
        if capable {
            self.ecn |= ecn::CE;
        }
        capable
    }

    /// Direction of travel: data and datagrams go forward along the flow's path.
    pub fn forward(&self) -> bool {
        matches!(self.kind, PacketKind::Data | PacketKind::Datagram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ecn_byte_keeps_a_packet_at_56_bytes() {
        // Packets are copied into every link they cross: the ECN bits took padding, not space.
        assert_eq!(std::mem::size_of::<Packet>(), 56);
    }

    #[test]
    fn only_an_ecn_capable_packet_can_be_marked() {
        let mut p = Packet::new(0, PacketKind::Data, 0, 0, 1040, 0);
        assert!(!p.mark_ce() && !p.has(ecn::CE));
        p.ecn = ecn::ECT0;
        assert!(p.mark_ce() && p.has(ecn::CE));
        p.ecn = ecn::ECT1;
        assert!(
            p.mark_ce() && p.has(ecn::CE),
            "ECT(1), the L4S identifier, is ECN-capable too"
        );
        assert!(p.mark_ce(), "a CE packet stays ECN-capable at the next queue");
    }
}
