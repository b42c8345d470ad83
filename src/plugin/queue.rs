//! Job queue: the agents waiting for a search, one line per [`Priority`].
//!
//! An agent waits in at most one place: its [`PlanState`](super::tasks::PlanState)
//! records the priority it waits with, and an entry whose priority no longer
//! matches (the agent was raised to a more urgent line, or stopped waiting)
//! is skipped when it comes up.

use std::collections::VecDeque;

use bevy_ecs::entity::Entity;

use super::workers::Priority;

/// Agents waiting for a search, most urgent line first.
#[derive(Default)]
pub(crate) struct JobQueue {
    lines: [VecDeque<Entity>; 3],
    /// Entries in the lines, stale ones included.
    entries: usize,
}

impl JobQueue {
    /// Adds `entity` to the line of `priority`.
    pub(crate) fn push(&mut self, entity: Entity, priority: Priority) {
        self.lines[priority as usize].push_back(entity);
        self.entries += 1;
    }

    /// The next entry of the most urgent non-empty line at or after
    /// `from`, with its priority.
    pub(crate) fn pop(&mut self, from: Priority) -> Option<(Entity, Priority)> {
        for priority in Priority::ALL.into_iter().filter(|p| *p >= from) {
            if let Some(entity) = self.lines[priority as usize].pop_front() {
                self.entries -= 1;
                return Some((entity, priority));
            }
        }
        None
    }

    /// Entries waiting (stale ones included).
    pub(crate) fn len(&self) -> usize {
        self.entries
    }

    /// Whether no entry waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Whether the line of `priority` is empty.
    pub(crate) fn line_is_empty(&self, priority: Priority) -> bool {
        self.lines[priority as usize].is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_served_most_urgent_first() {
        let e = |i| Entity::from_raw_u32(i).unwrap();
        let mut q = JobQueue::default();
        q.push(e(1), Priority::Refine);
        q.push(e(2), Priority::FirstPath);
        q.push(e(3), Priority::Urgent);
        q.push(e(4), Priority::FirstPath);
        assert_eq!(q.len(), 4);
        assert_eq!(q.pop(Priority::Urgent), Some((e(3), Priority::Urgent)));
        assert_eq!(
            q.pop(Priority::FirstPath),
            Some((e(2), Priority::FirstPath))
        );
        assert_eq!(q.pop(Priority::Urgent), Some((e(4), Priority::FirstPath)));
        assert!(!q.line_is_empty(Priority::Refine));
        assert_eq!(q.pop(Priority::Urgent), Some((e(1), Priority::Refine)));
        assert_eq!(q.pop(Priority::Urgent), None);
        assert!(q.is_empty());
    }
}
