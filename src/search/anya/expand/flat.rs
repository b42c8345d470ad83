//! Flat successors: the interval of a root's own grid line up to the next
//! corner, and the turn there.

use core::cmp::Ordering;

use bevy_math::DVec2;

use super::{Anya, Turn};
use crate::search::anya::node::{Ep, Kind, Node, ceil_of, floor_of, int_of};
use crate::search::anya::scan;

impl Anya<'_> {
    /// The flat interval of line `y` from `from` (a vertex, or the root itself
    /// when `None`) in direction `dir`, up to the next corner with its blocked
    /// cell behind or the end of the walkable stretch.
    pub(super) fn flat(&mut self, root: u32, r: DVec2, g: f64, y: i64, dir: i8, from: Option<i64>) {
        let x = from.map_or(r.x, |k| k as f64);
        let (up, dn) = (self.grid.row_words(y - 1), self.grid.row_words(y));
        let first = if let Some(k) = int_of(x) {
            // The edge ahead needs a free side.
            let cx = if dir > 0 { k } else { k - 1 };
            // (`k` is a vertex of the grid: `cx` is in -1..=width.)
            if !scan::free_at(up, cx) && !scan::free_at(dn, cx) {
                return;
            }
            k + i64::from(dir)
        } else if dir > 0 {
            ceil_of(x)
        } else {
            floor_of(x)
        };
        let end = if dir > 0 {
            scan::flat_right(up, dn, first)
        } else {
            scan::flat_left(up, dn, first)
        };
        let near = from.map_or(Ep::Root, Ep::Int);
        let (a, b) = if dir > 0 {
            (near, Ep::Int(end))
        } else {
            (Ep::Int(end), near)
        };
        if self.goal_line == Some(y)
            && a.cmp_point(r, self.t) != Ordering::Greater
            && b.cmp_point(r, self.t) != Ordering::Less
        {
            self.push_goal(root, r, g);
        }
        // The walk stopped at a corner with its blocked cell behind (where it
        // may go on and turn) or where it cannot go on.
        let Some(wedge) = self.taut_turn([end, y], r) else {
            return;
        };
        let (turn_a, turn_b) = if self.eager {
            self.scratch.turns.push(Turn {
                v: [end, y],
                root,
                r,
                g,
                wedge,
            });
            (false, false)
        } else if dir > 0 {
            (false, true)
        } else {
            (true, false)
        };
        self.scratch.succ.push(Node {
            root,
            r,
            g,
            y,
            a,
            b,
            a_floor: a.floor(r, y),
            kind: Kind::Flat { dir },
            turn_a,
            turn_b,
            onward: true,
        });
    }
}
