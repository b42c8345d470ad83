//! Job queue: the agents waiting for a search, one line per [`Priority`],
//! each entry with the frame it joined its line in.
//!
//! An agent waits in at most one place: its [`PlanState`](super::PlanState)
//! records the priority it waits with, and an entry whose priority no longer
//! matches (the agent was raised to a more urgent line, or stopped waiting)
//! is skipped when it comes up. Agents are served in the order they joined
//! their line; those that joined since dispatch last ran, in the order of
//! their entities (not of the queries that found them, whose order over
//! archetypes differs between platforms). Entries age: dispatch takes one that has
//! waited [`MAX_WAIT`] frames ahead of every line (see
//! [`JobQueue::pop_aged`]), so that no agent waits unboundedly behind more
//! urgent ones.

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
        for (line, fresh) in self.lines.iter_mut().zip(&mut self.fresh) {
            let n = line.len();
            if *fresh > 1 {
                line.make_contiguous()[n - *fresh..]
                    .sort_unstable_by_key(|&(e, since)| (since, e.to_bits()));
            }
            *fresh = 0;
        }
    }

    /// Adds `entity` to the line of `priority`.
    pub(crate) fn push(&mut self, entity: Entity, priority: Priority) {
        self.lines[priority as usize].push_back((entity, self.frame));
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

    /// The next entry of the line of `priority` if it has waited at least
    /// `frames` frames.
    pub(crate) fn pop_aged(&mut self, priority: Priority, frames: u32) -> Option<Entity> {
        let &(_, since) = self.lines[priority as usize].front()?;
        if self.frame.wrapping_sub(since) < frames {
            return None;
        }
        self.pop_line(priority)
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
        q.push(e(1), Priority::Refine);
        q.push(e(2), Priority::FirstPath);
        q.push(e(3), Priority::Urgent);
        q.push(e(4), Priority::FirstPath);
        q.push(e(5), Priority::Walled);
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
        q.push(e(7), Priority::FirstPath);
        q.next_frame();
        for i in [5, 9, 2] {
            q.push(e(i), Priority::FirstPath);
        }
        q.push(e(4), Priority::Urgent);
        q.push(e(3), Priority::Urgent);
        q.next_frame();
        q.push(e(1), Priority::FirstPath);
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
        q.push(e(1), Priority::FirstPath);
        q.next_frame();
        q.push(e(2), Priority::FirstPath);
        q.push(e(3), Priority::Urgent);
        for _ in 1..MAX_WAIT {
            q.next_frame();
        }
        assert_eq!(q.longest_wait(), MAX_WAIT);
        assert_eq!(
            q.pop_aged(Priority::Urgent, MAX_WAIT),
            None,
            "one frame short"
        );
        assert_eq!(q.pop_aged(Priority::FirstPath, MAX_WAIT), Some(e(1)));
        assert_eq!(q.pop_aged(Priority::FirstPath, MAX_WAIT), None);
        q.next_frame();
        assert_eq!(q.pop_aged(Priority::FirstPath, MAX_WAIT), Some(e(2)));
        assert_eq!(q.longest_wait(), MAX_WAIT);
        assert_eq!(q.pop_line(Priority::Urgent), Some(e(3)));
        assert_eq!(q.longest_wait(), 0);
    }
}
