//! The plugin's path geometry, apart from any system: which edits affect a
//! plan ([`impact`]) and what is done to a path ([`path`]: the part ahead,
//! cutting, the way out of a wall, joining a late path). Everything here
//! takes grids and paths and returns answers, so it is tested alone.

pub(crate) mod impact;
pub(crate) mod path;

pub(crate) use impact::{EditCheck, edit_impact, point_in_rect, rect_distance, region_point};
pub(crate) use path::{
    closest_on_segment, cut_at_blocked_segment, fits, join, remaining, sees, sees_waypoint,
    segment_distance, stop_here, walk_out, way_out,
};
