//! Lockstep ledger: every search sent is answered in the frame fixed when it was sent, in the order searches were sent.
//!
//! In lockstep mode ([`PathfindingSettings::lockstep`](crate::plugin::PathfindingSettings::lockstep))
//! the executor numbers each job as it is sent and notes the frame its
//! outcomes are due in: the frame it was sent in plus the delay. Outcomes
//! that arrive early wait here; in the due frame the apply stage takes
//! exactly the outcomes due, in the order their jobs were sent, after the
//! executor has waited for any still missing. So what the game sees
//! depends on the frames searches were sent in, not on when threads
//! finished them. How many paced searches go out a frame is a count, not a
//! measure of the threads' load.

use std::collections::BTreeMap;

use super::job::Outcome;

/// The jobs sent in lockstep mode and not yet handed to the apply stage.
#[derive(Default)]
pub(crate) struct Ledger {
    /// Frames between sending a search and applying its answer.
    delay: u64,
    /// Paced searches that may be sent a frame.
    per_frame: usize,
    /// Apply stages run so far: the frame searches sent now belong to.
    frame: u64,
    /// Paced searches sent this frame.
    sent_paced: usize,
    /// The jobs owed, by number: jobs sent later are due no earlier, so the
    /// first entry is the first due.
    owed: BTreeMap<u64, Owed>,
    /// Answers owed, over every job.
    answers_owed: usize,
}

/// One job's outcomes: when due, how many still to come, those arrived.
struct Owed {
    due: u64,
    missing: usize,
    arrived: Vec<Outcome>,
}

impl Ledger {
    /// A ledger serving `per_frame` paced searches a frame, each answered
    /// `delay` frames after it was sent.
    pub(crate) fn new(delay: u32, per_frame: u32) -> Self {
        Ledger {
            delay: u64::from(delay),
            per_frame: (per_frame as usize).max(1),
            ..Ledger::default()
        }
    }

    /// Takes new settings; searches already sent keep their due frames.
    pub(crate) fn configure(&mut self, delay: u32, per_frame: u32) {
        self.delay = u64::from(delay);
        self.per_frame = (per_frame as usize).max(1);
    }

    /// Whether one more search may be sent this frame, besides `held` jobs
    /// about to be: searches for agents in a wall or on a blocked path
    /// (not `paced`) always, the others up to the count a frame.
    pub(crate) fn has_room(&self, paced: bool, held: usize) -> bool {
        !paced || self.sent_paced + held < self.per_frame
    }

    /// Notes job `seq`, sent now (a `paced` one or not), with `members`
    /// outcomes to come.
    pub(crate) fn sent(&mut self, seq: u64, members: usize, paced: bool) {
        self.sent_paced += usize::from(paced);
        self.answers_owed += members;
        self.owed.insert(
            seq,
            Owed {
                due: self.frame + self.delay,
                missing: members,
                arrived: Vec::with_capacity(members),
            },
        );
    }

    /// Files an outcome that arrived from the executor; gives back one of a
    /// job sent before lockstep mode began (to apply as it comes).
    pub(crate) fn arrived(&mut self, outcome: Outcome) -> Option<Outcome> {
        let Some(owed) = self.owed.get_mut(&outcome.seq) else {
            return Some(outcome);
        };
        owed.missing = owed.missing.saturating_sub(1);
        owed.arrived.push(outcome);
        None
    }

    /// Whether some job is due this frame (its outcomes arrived or not).
    pub(crate) fn any_due(&self) -> bool {
        self.owed
            .values()
            .next()
            .is_some_and(|o| o.due <= self.frame)
    }

    /// Whether an outcome due this frame has not arrived yet.
    pub(crate) fn missing_due(&self) -> bool {
        self.owed
            .values()
            .take_while(|o| o.due <= self.frame)
            .any(|o| o.missing > 0)
    }

    /// The outcomes due this frame, in the order their jobs were sent (each
    /// job's members in its own order); every one must have arrived (see
    /// [`Ledger::missing_due`]).
    pub(crate) fn take_due(&mut self) -> Vec<Outcome> {
        let mut due = Vec::new();
        while let Some(entry) = self.owed.first_entry() {
            if entry.get().due > self.frame || entry.get().missing > 0 {
                break;
            }
            let owed = entry.remove();
            self.answers_owed -= owed.arrived.len();
            due.extend(owed.arrived);
        }
        due
    }

    /// Every outcome held, due or not, in the order their jobs were sent
    /// (lockstep mode ends; the outcomes still to come arrive as they
    /// come).
    pub(crate) fn take_all(&mut self) -> Vec<Outcome> {
        let owed = core::mem::take(&mut self.owed);
        self.answers_owed = 0;
        owed.into_values().flat_map(|o| o.arrived).collect()
    }

    /// Answers owed: of the jobs sent and not yet handed over.
    pub(crate) fn owed(&self) -> usize {
        self.answers_owed
    }

    /// The apply stage of this frame is over: searches sent from now on
    /// belong to the next frame.
    pub(crate) fn end_frame(&mut self) {
        self.frame += 1;
        self.sent_paced = 0;
    }
}
