//! Each agent's last few path and status changes, kept by the game tests for
//! their failure reports.

use std::collections::VecDeque;
use std::fmt;

use bevy_anyangle::plugin::{NavPath, PathStatus, Replanning};
use bevy_ecs::entity::EntityHashMap;
use bevy_ecs::prelude::*;
use bevy_math::DVec2;

/// An agent's path, progress, status and replanning marker as one frame left
/// them.
#[derive(Debug, PartialEq)]
pub struct Seen {
    pub status: PathStatus,
    pub replanning: bool,
    pub next: usize,
    pub waypoints: Vec<DVec2>,
    pub version: u64,
    pub start_moved: bool,
    pub cut: bool,
}

impl fmt::Display for Seen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} replanning {} next {} of {:?} version {} moved {} cut {}",
            self.status,
            self.replanning,
            self.next,
            self.waypoints,
            self.version,
            self.start_moved,
            self.cut
        )
    }
}

/// Per agent: its last changes, each with the frame and where it stood.
pub type History = EntityHashMap<VecDeque<(usize, DVec2, Seen)>>;

/// Records agent `e`'s state at the end of `frame` (standing at `p`) if it
/// changed, keeping its last `keep` changes. Only a change allocates.
pub fn note(history: &mut History, world: &World, frame: usize, e: Entity, p: DVec2, keep: usize) {
    let path = world.get::<NavPath>(e).unwrap();
    let status = world.get::<PathStatus>(e).unwrap();
    let replanning = world.get::<Replanning>(e).is_some();
    let seen = history.entry(e).or_default();
    let same = seen.back().is_some_and(|(_, _, s)| {
        s.status == *status
            && s.replanning == replanning
            && s.next == path.next
            && s.waypoints == path.grid_waypoints
            && s.version == path.grid_version
            && s.start_moved == path.start_moved
            && s.cut == path.cut
    });
    if same {
        return;
    }
    seen.push_back((
        frame,
        p,
        Seen {
            status: status.clone(),
            replanning,
            next: path.next,
            waypoints: path.grid_waypoints.clone(),
            version: path.grid_version,
            start_moved: path.start_moved,
            cut: path.cut,
        },
    ));
    if seen.len() > keep {
        seen.pop_front();
    }
}
