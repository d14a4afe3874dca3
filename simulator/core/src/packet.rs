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
            sack_len: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    pub fn sack_blocks(&self) -> &[SeqRange] {
        &self.sack[..self.sack_len as usize]
    }

    /// Direction of travel: data and datagrams go forward along the flow's path.
    pub fn forward(&self) -> bool {
        matches!(self.kind, PacketKind::Data | PacketKind::Datagram)
    }
}
