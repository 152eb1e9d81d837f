//! The campaigns as the web layer asks for them, one service. Its methods live in the files
//! of what they do: taking a campaign in (`accept`), answering for campaigns (`answers`),
//! taking one back (`cancel`) and the reference figures kept beside one (`references`).

use std::sync::Arc;

use super::Lab;

/// The lab's campaigns: submitted, checked, read, judged, cancelled, deleted, and the other
/// tools' figures kept beside them.
pub struct Campaigns<'a> {
    /// Taking a campaign in checks it on a blocking thread, which holds the lab.
    pub(super) lab: &'a Arc<Lab>,
}

impl Lab {
    /// The campaigns: taking them in, answering for them, taking them back.
    pub fn campaigns(self: &Arc<Self>) -> Campaigns<'_> {
        Campaigns { lab: self }
    }
}
