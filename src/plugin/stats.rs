//! The plugin's counters and frame timer, published once a frame as
//! [`PathfindingDiagnostics`].
//!
//! Each stage adds its counts to [`Counters`] and times its systems with the
//! [`Meter`]. Two systems here write the public resource: [`publish`], at
//! the end of [`AnyAngleSystems::Apply`](crate::plugin::AnyAngleSystems::Apply),
//! the counters; [`close_frame`], after the plugin's last set, what its
//! systems cost the frame.

use core::time::Duration;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_platform::time::Instant;

use bevy_ecs::prelude::*;

use crate::plugin::api::PathfindingDiagnostics;

/// Time the plugin's systems spent since the last frame was published.
#[derive(Resource, Default)]
pub(crate) struct Meter {
    nanos: AtomicU64,
}

impl Meter {
    /// Starts timing a system; the time is added when the guard drops.
    pub(crate) fn start(&self) -> Timed<'_> {
        Timed {
            meter: self,
            began: Instant::now(),
        }
    }

    /// The time the plugin's systems have taken so far this frame (the
    /// systems still running not counted).
    pub(crate) fn so_far(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }

    /// The time gathered since the last call, and a fresh start.
    fn take(&self) -> Duration {
        Duration::from_nanos(self.nanos.swap(0, Ordering::Relaxed))
    }
}

/// Adds the time from its creation to its drop to a [`Meter`].
pub(crate) struct Timed<'a> {
    meter: &'a Meter,
    began: Instant,
}

impl Timed<'_> {
    /// The time since this system started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.began.elapsed()
    }
}

impl Drop for Timed<'_> {
    fn drop(&mut self) {
        let nanos = u64::try_from(self.began.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.meter.nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

/// What the stages count, as [`PathfindingDiagnostics`] shows it (its
/// `frame_cost` comes from the [`Meter`]).
#[derive(Resource, Default)]
pub(crate) struct Counters(pub(crate) PathfindingDiagnostics);

/// Publishes the counters in [`PathfindingDiagnostics`] (its `frame_cost`
/// stays until [`close_frame`]). Runs at the end of the apply stage.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn publish(counters: Res<Counters>, mut diagnostics: ResMut<PathfindingDiagnostics>) {
    let now = PathfindingDiagnostics {
        frame_cost: diagnostics.frame_cost,
        ..counters.0
    };
    diagnostics.set_if_neq(now);
}

/// Moves the time the plugin's systems took this frame into
/// [`PathfindingDiagnostics::frame_cost`]. Runs after the plugin's last set.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn close_frame(meter: Res<Meter>, mut diagnostics: ResMut<PathfindingDiagnostics>) {
    let took = meter.take();
    if diagnostics.frame_cost != took {
        diagnostics.frame_cost = took;
    }
}
