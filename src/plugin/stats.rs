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
#[derive(Resource)]
pub(crate) struct Meter {
    nanos: AtomicU64,
    /// [`Meter::so_far`] when the searches of this frame ended (nanos).
    searched: AtomicU64,
    /// What the systems after the searches cost of late (nanos): a running
    /// mean, each frame weighing a quarter.
    after: AtomicU64,
}

impl Default for Meter {
    fn default() -> Self {
        Meter {
            nanos: AtomicU64::new(0),
            searched: AtomicU64::new(u64::MAX),
            after: AtomicU64::new(0),
        }
    }
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

    /// Marks the end of this frame's searches: what the plugin spends
    /// after it (applying answers, steering) is reckoned from here.
    /// `so_far` is [`Meter::so_far`] with the running system's time.
    pub(crate) fn searches_ended(&self, so_far: Duration) {
        let nanos = u64::try_from(so_far.as_nanos()).unwrap_or(u64::MAX);
        self.searched.store(nanos, Ordering::Relaxed);
    }

    /// What the plugin's systems after the searches are expected to cost
    /// this frame (as they did in recent frames), to be left out of the
    /// searches' share of the budget.
    pub(crate) fn after_searches(&self) -> Duration {
        Duration::from_nanos(self.after.load(Ordering::Relaxed))
    }

    /// The time gathered since the last call, and a fresh start; updates
    /// [`Meter::after_searches`] with this frame's.
    fn take(&self) -> Duration {
        let total = self.nanos.swap(0, Ordering::Relaxed);
        let searched = self.searched.swap(u64::MAX, Ordering::Relaxed);
        if searched != u64::MAX {
            let after = total.saturating_sub(searched);
            let mean = self.after.load(Ordering::Relaxed);
            self.after
                .store(mean / 4 * 3 + after / 4, Ordering::Relaxed);
        }
        Duration::from_nanos(total)
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
