//! The agents' planning state: one state machine per agent ([`PlanState`],
//! changed only through the named transitions of `state`), the job queue it
//! waits in, and the edit index that finds the agents an edit may concern.
//!
//! | module | what it holds |
//! |---|---|
//! | `state` | [`PlanState`], its phases and transitions, and [`PlanBook`] (queue, tickets, markers, grids in use) |
//! | `queue` | the job queue, one line per [`Priority`] |
//! | `index` | [`AgentIndex`]: agents by the cells near their paths |
//! | `edit_index` | the spatial index of boxes behind it |

mod edit_index;
mod index;
mod queue;
mod state;

use bevy_app::App;
use bevy_ecs::prelude::*;

pub(crate) use index::{AgentIndex, index_margin, reindex_all};
pub(crate) use queue::{MAX_WAIT, Priority};
pub(crate) use state::{CancelOnDrop, PlanBook, PlanState};

use crate::plugin::api::{NavPath, PathFailed, PathStatus, PlanReason, Replanning};
use crate::plugin::stats::Meter;

/// The agents' plans and their edit index, for systems that change both.
#[derive(bevy_ecs::system::SystemParam)]
pub(crate) struct Plans<'w> {
    /// The job queue, tickets, markers and clearances.
    pub(crate) book: ResMut<'w, PlanBook>,
    /// The edit index.
    pub(crate) index: ResMut<'w, AgentIndex>,
}

/// Attaches a [`PlanState`] to every agent: as a component
/// [`PathRequest`](crate::plugin::PathRequest) requires, or, for an app
/// that had spawned agents before it added the plugin (the requirement can
/// then no longer be registered), to those agents now and to later ones as
/// their request is added.
pub(crate) fn attach_state(app: &mut App) {
    use crate::plugin::api::PathRequest;
    let world = app.world_mut();
    if world
        .try_register_required_components::<PathRequest, PlanState>()
        .is_ok()
    {
        return;
    }
    let early: Vec<Entity> = world
        .query_filtered::<Entity, (With<PathRequest>, Without<PlanState>)>()
        .iter(world)
        .collect();
    for entity in early {
        world.entity_mut(entity).insert(PlanState::default());
    }
    app.add_observer(
        |added: On<Add<PathRequest>>,
         mut commands: Commands,
         states: Query<(), With<PlanState>>| {
            if !states.contains(added.entity) {
                commands
                    .entity(added.entity)
                    .try_insert(PlanState::default());
            }
        },
    );
}

/// Ends an agent's planning in a failure: sets its status, clears its path
/// (out of the edit index, onto the freed-cells watch list if a freed cell
/// may mend it) and fires [`PathFailed`].
#[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
pub(crate) fn fail(
    commands: &mut Commands,
    book: &mut PlanBook,
    index: &mut AgentIndex,
    entity: Entity,
    state: &mut PlanState,
    reason: PlanReason,
    status: &mut Mut<PathStatus>,
    path: &mut Mut<NavPath>,
    new_status: PathStatus,
) {
    book.stop(entity, state);
    index.unindex(entity);
    index.watch_failure(entity, &new_status);
    end_in_failure(commands, entity, reason, status, path, new_status);
}

/// Sets a failed agent's status, clears its path and fires [`PathFailed`]
/// (triggered on the agent and written as a message): the part of a
/// failure every kind of agent shares.
pub(crate) fn end_in_failure(
    commands: &mut Commands,
    entity: Entity,
    reason: PlanReason,
    status: &mut Mut<PathStatus>,
    path: &mut Mut<NavPath>,
    new_status: PathStatus,
) {
    status.set_if_neq(new_status.clone());
    if !path.is_empty() {
        **path = NavPath::default();
    }
    let failed = PathFailed {
        entity,
        reason,
        status: new_status,
    };
    commands.write_message(failed.clone());
    commands.trigger(failed);
}

/// Adds and removes [`Replanning`] markers as the transitions asked.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn sync_markers(meter: Res<Meter>, mut book: ResMut<PlanBook>, mut commands: Commands) {
    let _cost = meter.start();
    for (entity, on) in book.drain_markers() {
        if on {
            commands.entity(entity).try_insert(Replanning);
        } else {
            commands.entity(entity).try_remove::<Replanning>();
        }
    }
}
