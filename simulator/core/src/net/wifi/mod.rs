//! 802.11b/g links (issue 18): an access point and its stations share one medium under the
//! DCF. `phy` holds the standard's timing, `error` the frame error rate from SNR, `dcf` one
//! transmitter's backoff, `medium` the contention and the frame exchanges.

mod dcf;
mod error;
mod medium;
mod phy;

pub use dcf::Dcf;
pub use error::{LinkErrors, SuccessCache};
pub use medium::{Handover, Mac, Medium, Snr, WifiCounters};
pub use phy::{Mode, Modulation, Phy, Standard};
