//! Packets and their pool. A packet lives in one slot of the pool from the moment a host
//! sends it until it is delivered or dropped; links and events hold its index only.

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

pub type PacketId = u32;

/// A free list of packet slots: steady-state sending reuses slots instead of allocating.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketPool {
    pub fn insert(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Frees the slot and hands back the packet's value.
    pub fn remove(&mut self, id: PacketId) -> Packet {
        self.free.push(id);
        self.slots[id as usize]
    }

    /// Packets currently alive (in queues or on the wire).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Slots ever allocated: the high-water mark of packets alive at once.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_slots_are_reused_before_the_pool_grows() {
        let mut pool = PacketPool::default();
        let a = pool.insert(Packet::new(0, PacketKind::Data, 0, 1, 1040, 0));
        let _b = pool.insert(Packet::new(0, PacketKind::Data, 0, 2, 1040, 0));
        pool.remove(a);
        let c = pool.insert(Packet::new(0, PacketKind::Data, 0, 3, 1040, 0));
        assert_eq!(c, a);
        assert_eq!(pool.capacity(), 2);
        assert_eq!(pool.live(), 2);
        assert_eq!(pool.get(c).seq, 3);
    }
}
