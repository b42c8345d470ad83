//! What the plugin tells: [`PathReady`] and [`PathFailed`], each triggered on
//! the agent and written as a message.

use bevy_ecs::entity::Entity;
use bevy_ecs::event::EntityEvent;
use bevy_ecs::message::Message;

use super::path::{PathStatus, PlanReason};

/// Sent when a search gives an agent a new path (status `Ready` or
/// `Fallback`): triggered on the agent for observers (`On<PathReady>`), and
/// written as a message for systems that read them in batches
/// (`MessageReader<PathReady>`).
#[derive(EntityEvent, Message, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
pub struct PathReady {
    /// The agent.
    pub entity: Entity,
    /// Why the path was planned.
    pub reason: PlanReason,
    /// Whether it is a fallback path (the goal is unreachable).
    pub fallback: bool,
    /// Its length in world units.
    pub length: f32,
}

/// Sent when planning ends without a path (status `Unreachable` or
/// `Failed`): triggered on the agent for observers (`On<PathFailed>`), and
/// written as a message (`MessageReader<PathFailed>`).
#[derive(EntityEvent, Message, Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Clone)
)]
pub struct PathFailed {
    /// The agent.
    pub entity: Entity,
    /// Why the plan was made.
    pub reason: PlanReason,
    /// The agent's new status: `Unreachable` or `Failed(..)`.
    pub status: PathStatus,
}
