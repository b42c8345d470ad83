//! Fair turns: every fourth search an executor begins comes from the lines of agents with no path yet or refining one, in turn, so that no agent waits unboundedly behind more urgent ones.
//!
//! Executors begin the most urgent search waiting. Under load (edits that
//! keep blocking paths faster than the searches answer) that would leave
//! the agents with nothing to follow yet, and those refining a path, waiting
//! for as long as the load lasts. So every [`STREAK`]th search begun is the
//! turn of one of those two lines (the next in rotation, if it has a search
//! waiting): each then gets at least one search in `2 * STREAK` however
//! many more urgent ones wait.

use crate::plugin::agent::Priority;

/// Searches begun by urgency alone between two fair turns, plus one.
const STREAK: u8 = 4;

/// The lines fair turns go to, in rotation.
const TURNS: [Priority; 2] = [Priority::FirstPath, Priority::Refine];

/// Which line the next search begun comes from first (see the module
/// docs). Each search thread keeps its own, as does the main thread.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    /// Searches begun since the last fair turn.
    begun: u8,
    /// The next line in rotation (an index of `TURNS`).
    next: u8,
}

impl Turns {
    /// Whether the next search begun is a fair turn.
    pub(crate) fn fair(&self) -> bool {
        self.begun + 1 >= STREAK
    }

    /// The order to look at the lines in for the next search: most urgent
    /// first, but on a fair turn the line in rotation before the others.
    pub(crate) fn order(&self) -> [Priority; 4] {
        if !self.fair() {
            return Priority::ALL;
        }
        let first = TURNS[usize::from(self.next)];
        let mut order = [first; 4];
        for (slot, p) in order[1..]
            .iter_mut()
            .zip(Priority::ALL.into_iter().filter(|&p| p != first))
        {
            *slot = p;
        }
        order
    }

    /// A search was begun.
    pub(crate) fn begun(&mut self) {
        if self.fair() {
            self.begun = 0;
            self.next = (self.next + 1) % TURNS.len() as u8;
        } else {
            self.begun += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Priority, STREAK, Turns};
    use Priority::{FirstPath, Refine, Urgent, Walled};

    #[test]
    fn every_fourth_turn_goes_to_a_paced_line_in_rotation() {
        let mut turns = Turns::default();
        let mut orders = Vec::new();
        for _ in 0..2 * STREAK {
            let order = turns.order();
            let mut sorted = order;
            sorted.sort();
            assert_eq!(sorted, Priority::ALL, "every line, once");
            orders.push(order);
            turns.begun();
        }
        let firsts: Vec<Priority> = orders.iter().map(|o| o[0]).collect();
        assert_eq!(
            firsts,
            [
                Walled, Walled, Walled, FirstPath, Walled, Walled, Walled, Refine
            ]
        );
        assert_eq!(orders[3], [FirstPath, Walled, Urgent, Refine]);
        assert_eq!(orders[7], [Refine, Walled, Urgent, FirstPath]);
    }
}
