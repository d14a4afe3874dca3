//! FACK TCP (Mathis & Mahdavi, "Forward Acknowledgment: Refining TCP Congestion Control",
//! SIGCOMM 1996; paper 003 §3.2): Reno's window policy with SACK-based recovery that keeps an
//! explicit count of the data in the network, awnd = snd.nxt − snd.fack + retran_data, sends
//! while awnd < cwnd, takes every hole below snd.fack as lost, starts recovery as soon as the
//! receiver holds more than three segments past a hole (or on three duplicate ACKs), and
//! halves cwnd once per loss episode, at once. The mechanics are in `tcp/recovery/fack.rs`; the
//! `fack` variant turns SACK blocks on at the receiver. Behaviour: `tests/behaviour.rs`.

use super::aimd::Aimd;
use crate::tcp::{Recovery, WindowReduction};

pub const FACK: Aimd = Aimd::new("fack", Recovery::Fack(WindowReduction::Halve));
