//! TCP: one sender and one receiver machine per flow, counting in segments (as ns-2 does).
//! The sender owns the mechanics (windows, retransmission, timers, the SACK scoreboard); a
//! congestion-control variant (`crate::cc`) decides the window policy and names the loss
//! recovery (`recovery::Recovery`, one module each behind `recovery::LossRecovery`) the
//! sender drives.

pub mod delivery;
pub mod rack;
pub mod receiver;
pub mod recovery;
pub mod rto;
pub mod scoreboard;
pub mod sender;
pub mod socket;

pub use delivery::{DeliveryRate, RateSample};
pub use receiver::TcpReceiver;
pub use recovery::{LossRecovery, PartialAck, PartialAckTimer, Recovery, WindowReduction};
pub use sender::{SenderCounters, TcpSender};
pub use socket::{CaState, SocketState};

/// A transfer of `bytes` in segments of `mss`: (segment count, payload of the last segment).
pub fn transfer_shape(bytes: u64, mss: u32) -> (u32, u32) {
    let mss64 = mss as u64;
    let segments = bytes.div_ceil(mss64).max(1);
    let last = match bytes % mss64 {
        0 => mss,
        r => r as u32,
    };
    (segments.min(u32::MAX as u64) as u32, last)
}
