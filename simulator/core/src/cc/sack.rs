//! SACK TCP (RFC 2018 blocks, RFC 6675 loss recovery; Fall & Floyd 1996): Reno's window policy
//! with scoreboard-driven recovery that repairs several holes in about one round trip.
//! The `sack` variant turns SACK blocks on at the receiver. Behaviour: `tests/behaviour.rs`.

use super::aimd::Aimd;
use crate::tcp::Recovery;

pub const SACK: Aimd = Aimd::new("sack", Recovery::Sack);
