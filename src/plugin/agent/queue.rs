//! Job queue: the agents waiting for a search, one line per [`Priority`],
//! each entry with the frame its agent began waiting in.
//!
//! An agent waits in at most one place: its [`PlanState`](super::PlanState)
//! records the priority it waits with, and an entry whose priority no longer
//! matches (the agent was raised to a more urgent line, or stopped waiting)
//! is skipped when it comes up. Agents are served in the order they began
//! waiting (an agent queued again, its answer thrown away or its search
//! cancelled by a newer request, keeps its place); those that began in one
//! frame, in the order of their entities (not of the queries that found
//! them, whose order over archetypes differs between platforms). Entries age: dispatch takes those
//! that have waited [`MAX_WAIT`] frames ahead of every line, longest wait
//! first whatever their line (see [`JobQueue::pop_aged`]), so that no agent
//! waits unboundedly behind more urgent ones.

use std::collections::VecDeque;

use bevy_ecs::entity::Entity;

/// The order in which waiting searches are served: most urgent first.
///
/// | priority | who |
/// |---|---|
/// | `Walled` | agents standing in a cell an edit blocked under them |
/// | `Urgent` | agents whose path an edit blocked |
/// | `FirstPath` | agents with no followable path: new or changed requests, failed plans |
/// | `Refine` | agents that follow a path while a better one is planned: shortcuts, regions connected, settings or grid changes, moved targets, off-path agents |
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Priority {
    /// The agent stands in a wall.
    Walled = 0,
    /// The agent's path leads into a new wall.
    Urgent = 1,
    /// The agent has nothing to follow yet.
    FirstPath = 2,
    /// The agent follows a path while a better one is planned.
    Refine = 3,
}

impl Priority {
    /// Every priority, most urgent first.
    pub(crate) const ALL: [Priority; 4] = [
        Priority::Walled,
        Priority::Urgent,
        Priority::FirstPath,
        Priority::Refine,
    ];
}

/// Frames an agent waits in a line before dispatch takes it ahead of the
/// more urgent lines: half a second at 60 frames a second.
pub(crate) const MAX_WAIT: u32 = 30;

/// The lines whose entries age, in the order they are served once aged:
/// agents with nothing to follow (a blocked path, or none yet), longest
/// wait first, before agents that follow a path while a better one is
/// planned. (Agents in a wall are sent at once.)
const AGING: [&[Priority]; 2] = [
    &[Priority::Urgent, Priority::FirstPath],
    &[Priority::Refine],
];

/// Agents waiting for a search, most urgent line first.
#[derive(Default)]
pub(crate) struct JobQueue {
    /// Each entry: the agent and the frame it joined the line in.
    lines: [VecDeque<(Entity, u32)>; 4],
    /// Entries in the lines, stale ones included.
    entries: usize,
    /// The current frame (counted by [`JobQueue::next_frame`]).
    frame: u32,
    /// Per line: the entries at its back that joined since the last
    /// [`JobQueue::next_frame`], not yet put in order.
    fresh: [usize; 4],
}

impl JobQueue {
    /// A frame has passed (dispatch is about to serve the lines): the
    /// entries that joined since the last call are put in the order of the
    /// frame they joined in, then of their entities.
    pub(crate) fn next_frame(&mut self) {
        self.frame = self.frame.wrapping_add(1);
        let frame = self.frame;
        // (Ages, not frames, are compared: the frame count may wrap.)
        let key = |&(e, since): &(Entity, u32)| (u32::MAX - frame.wrapping_sub(since), e.to_bits());
        for (line, fresh) in self.lines.iter_mut().zip(&mut self.fresh) {
            let n = line.len();
            if *fresh > 0 {
                let entries = line.make_contiguous();
                entries[n - *fresh..].sort_unstable_by_key(key);
                // An agent queued again keeps the frame it began waiting
                // in: it goes back to its place among the older entries.
                if n > *fresh && key(&entries[n - *fresh]) < key(&entries[n - *fresh - 1]) {
                    entries.sort_unstable_by_key(key);
                }
            }
            *fresh = 0;
        }
    }

    /// The current frame (see [`JobQueue::next_frame`]).
    pub(crate) fn frame(&self) -> u32 {
        self.frame
    }

    /// Adds `entity` to the line of `priority`, waiting since frame
    /// `since` (this frame for an agent that just began to wait).
    pub(crate) fn push(&mut self, entity: Entity, priority: Priority, since: u32) {
        self.lines[priority as usize].push_back((entity, since));
        self.fresh[priority as usize] += 1;
        self.entries += 1;
    }

    /// The next entry of the line of `priority`.
    pub(crate) fn pop_line(&mut self, priority: Priority) -> Option<Entity> {
        let line = &mut self.lines[priority as usize];
        let (entity, _) = line.pop_front()?;
        let fresh = &mut self.fresh[priority as usize];
        *fresh = (*fresh).min(line.len());
        self.entries -= 1;
        Some(entity)
    }

    /// The next entry that has waited at least `frames` frames, with its
    /// line: of the lines of agents with nothing to follow, the front entry
    /// that has waited longest (on a tie, the more urgent line's); if none
    /// has waited so long, the front of the line of agents that follow a
    /// path, if it has (see [`AGING`]).
    pub(crate) fn pop_aged(&mut self, frames: u32) -> Option<(Entity, Priority)> {
        let priority = AGING.into_iter().find_map(|lines| {
            lines
                .iter()
                .filter_map(|&p| {
                    let &(_, since) = self.lines[p as usize].front()?;
                    Some((self.frame.wrapping_sub(since), p))
                })
                .filter(|&(waited, _)| waited >= frames)
                .max_by_key(|&(waited, p)| (waited, core::cmp::Reverse(p)))
                .map(|(_, p)| p)
        })?;
        self.pop_line(priority).map(|e| (e, priority))
    }

    /// The most frames an entry has waited (stale ones included).
    pub(crate) fn longest_wait(&self) -> u32 {
        self.lines
            .iter()
            .filter_map(|line| line.front())
            .map(|&(_, since)| self.frame.wrapping_sub(since))
            .max()
            .unwrap_or(0)
    }

    /// The first `n` entries of the line of `priority`, in order, left in
    /// place (stale ones included).
    pub(crate) fn peek_line(&self, priority: Priority, n: usize) -> impl Iterator<Item = Entity> {
        self.lines[priority as usize]
            .iter()
            .take(n)
            .map(|&(entity, _)| entity)
    }

    /// Entries waiting (stale ones included).
    pub(crate) fn len(&self) -> usize {
        self.entries
    }

    /// Whether no entry waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_first_come_first_served() {
        let e = |i| Entity::from_raw_u32(i).unwrap();
        let mut q = JobQueue::default();
        q.push(e(1), Priority::Refine, q.frame());
        q.push(e(2), Priority::FirstPath, q.frame());
        q.push(e(3), Priority::Urgent, q.frame());
        q.push(e(4), Priority::FirstPath, q.frame());
        q.push(e(5), Priority::Walled, q.frame());
        assert_eq!(q.len(), 5);
        assert_eq!(q.pop_line(Priority::Walled), Some(e(5)));
        assert_eq!(q.pop_line(Priority::Urgent), Some(e(3)));
        assert_eq!(q.pop_line(Priority::Urgent), None);
        assert_eq!(q.pop_line(Priority::FirstPath), Some(e(2)));
        assert_eq!(q.pop_line(Priority::FirstPath), Some(e(4)));
        assert_eq!(q.pop_line(Priority::Refine), Some(e(1)));
        assert!(q.is_empty());
    }

    #[test]
    fn agents_that_join_a_line_in_one_frame_are_served_in_the_order_of_their_entities() {
        let e = |i| Entity::from_raw_u32(i).unwrap();
        let mut q = JobQueue::default();
        q.push(e(7), Priority::FirstPath, q.frame());
        q.next_frame();
        for i in [5, 9, 2] {
            q.push(e(i), Priority::FirstPath, q.frame());
        }
        q.push(e(4), Priority::Urgent, q.frame());
        q.push(e(3), Priority::Urgent, q.frame());
        q.next_frame();
        q.push(e(1), Priority::FirstPath, q.frame());
        q.next_frame();
        let line: Vec<Entity> = q.peek_line(Priority::FirstPath, 10).collect();
        let mut joined = [e(5), e(9), e(2)];
        joined.sort_unstable_by_key(|e| e.to_bits());
        assert_eq!(line, [e(7), joined[0], joined[1], joined[2], e(1)]);
        assert_ne!(joined, [e(5), e(9), e(2)], "put in order");
        let mut urgent = [e(4), e(3)];
        urgent.sort_unstable_by_key(|e| e.to_bits());
        assert_eq!(q.pop_line(Priority::Urgent), Some(urgent[0]));
        assert_eq!(q.pop_line(Priority::Urgent), Some(urgent[1]));
    }

    #[test]
    fn an_entry_ages_and_is_taken_once_it_has_waited_long_enough() {
        let e = |i| Entity::from_raw_u32(i).unwrap();
        let mut q = JobQueue::default();
        q.push(e(1), Priority::FirstPath, q.frame());
        q.next_frame();
        q.push(e(2), Priority::FirstPath, q.frame());
        q.push(e(3), Priority::Urgent, q.frame());
        for _ in 1..MAX_WAIT {
            q.next_frame();
        }
        assert_eq!(q.longest_wait(), MAX_WAIT);
        assert_eq!(q.pop_aged(MAX_WAIT), Some((e(1), Priority::FirstPath)));
        assert_eq!(q.pop_aged(MAX_WAIT), None, "one frame short");
        q.next_frame();
        // Waited as long: the more urgent line's first.
        assert_eq!(q.pop_aged(MAX_WAIT), Some((e(3), Priority::Urgent)));
        assert_eq!(q.pop_aged(MAX_WAIT), Some((e(2), Priority::FirstPath)));
        assert_eq!(q.longest_wait(), 0);
    }

    #[test]
    fn an_agent_queued_again_goes_back_to_its_place() {
        let e = |i| Entity::from_raw_u32(i).unwrap();
        let mut q = JobQueue::default();
        let began = q.frame();
        q.push(e(1), Priority::FirstPath, began);
        q.next_frame();
        q.push(e(2), Priority::FirstPath, q.frame());
        q.next_frame();
        assert_eq!(q.pop_line(Priority::FirstPath), Some(e(1)));
        q.next_frame();
        // Its answer thrown away: queued again, waiting since it began.
        q.push(e(3), Priority::FirstPath, q.frame());
        q.push(e(1), Priority::FirstPath, began);
        q.next_frame();
        let line: Vec<Entity> = q.peek_line(Priority::FirstPath, 10).collect();
        assert_eq!(line, [e(1), e(2), e(3)]);
        assert_eq!(q.longest_wait(), 4);
    }

    #[test]
    fn agents_that_follow_a_path_are_aged_last() {
        let e = |i| Entity::from_raw_u32(i).unwrap();
        let mut q = JobQueue::default();
        q.push(e(1), Priority::Refine, q.frame());
        q.next_frame();
        q.push(e(2), Priority::FirstPath, q.frame());
        q.next_frame();
        q.push(e(3), Priority::Urgent, q.frame());
        for _ in 0..MAX_WAIT {
            q.next_frame();
        }
        assert_eq!(q.pop_aged(MAX_WAIT), Some((e(2), Priority::FirstPath)));
        assert_eq!(q.pop_aged(MAX_WAIT), Some((e(3), Priority::Urgent)));
        assert_eq!(q.pop_aged(MAX_WAIT), Some((e(1), Priority::Refine)));
        assert_eq!(q.pop_aged(MAX_WAIT), None);
    }
}
