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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bevy_math::DVec2;

    use super::*;
    use crate::grid::Grid;
    use crate::plugin::dispatch::job::test_job;

    /// An outcome of job `seq` (a cancelled one: only its number counts).
    fn outcome(grid: &Arc<Grid>, seq: u64) -> Outcome {
        let mut job = test_job(grid, seq as u32, DVec2::splat(0.5), DVec2::splat(1.5));
        job.seq = seq;
        job.answer(
            None,
            #[cfg(feature = "debug-gizmos")]
            None,
        )
        .next()
        .expect("an outcome")
    }

    #[test]
    fn outcomes_are_handed_over_in_their_frame_in_the_order_sent() {
        let grid = Arc::new(Grid::new(4, 4).unwrap());
        let mut ledger = Ledger::new(2, 3);
        // Frame 0: three paced searches fill the frame; urgent ones still go.
        for seq in 0..3 {
            assert!(ledger.has_room(true, 0));
            ledger.sent(seq, 1, true);
        }
        assert!(!ledger.has_room(true, 0));
        assert!(ledger.has_room(false, 0));
        ledger.sent(3, 1, false);
        assert_eq!(ledger.owed(), 4);
        // They arrive at once, out of order: none is due yet.
        for seq in [2, 0, 3] {
            assert!(ledger.arrived(outcome(&grid, seq)).is_none());
        }
        assert!(!ledger.any_due());
        assert!(ledger.take_due().is_empty());
        ledger.end_frame();
        // Frame 1: one more, due in frame 3.
        assert!(ledger.has_room(true, 2) && !ledger.has_room(true, 3));
        ledger.sent(4, 1, true);
        assert!(ledger.arrived(outcome(&grid, 4)).is_none());
        ledger.end_frame();
        // Frame 2: the first four are due; the second is missing (the
        // executor waits for it before it takes them).
        assert!(ledger.any_due() && ledger.missing_due());
        assert!(ledger.arrived(outcome(&grid, 1)).is_none());
        assert!(!ledger.missing_due());
        let due: Vec<u64> = ledger.take_due().iter().map(|o| o.seq).collect();
        assert_eq!(due, [0, 1, 2, 3]);
        assert_eq!(ledger.owed(), 1);
        ledger.end_frame();
        // Frame 3: the last; an outcome of a job the ledger never saw comes
        // back to be applied as it is.
        assert!(ledger.arrived(outcome(&grid, 99)).is_some());
        let due: Vec<u64> = ledger.take_due().iter().map(|o| o.seq).collect();
        assert_eq!(due, [4]);
        assert_eq!(ledger.owed(), 0);
        assert!(!ledger.any_due());
    }

    #[test]
    fn lockstep_ending_hands_over_every_outcome_held() {
        let grid = Arc::new(Grid::new(4, 4).unwrap());
        let mut ledger = Ledger::new(5, 10);
        for seq in 0..4 {
            ledger.sent(seq, 1, true);
        }
        for seq in [3, 1] {
            assert!(ledger.arrived(outcome(&grid, seq)).is_none());
        }
        let held: Vec<u64> = ledger.take_all().iter().map(|o| o.seq).collect();
        assert_eq!(held, [1, 3]);
        assert_eq!(ledger.owed(), 0);
    }
}
