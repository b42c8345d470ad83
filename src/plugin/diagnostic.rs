//! The plugin's counters as Bevy diagnostics (feature `diagnostic`), for
//! `LogDiagnosticsPlugin`, on-screen overlays and profilers.

use std::time::Duration;

use bevy_app::{App, Last, Plugin};
use bevy_diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy_ecs::prelude::*;

use crate::plugin::api::PathfindingDiagnostics;

/// Publishes [`PathfindingDiagnostics`] as Bevy [`Diagnostic`]s, measured
/// once a frame (in `Last`). Add it beside [`AnyAnglePlugin`](super::AnyAnglePlugin):
///
/// ```
/// use bevy_anyangle::plugin::AnyAnglePlugin;
/// use bevy_anyangle::plugin::diagnostic::PathfindingDiagnosticsPlugin;
/// use bevy_app::App;
/// use bevy_diagnostic::DiagnosticsPlugin;
///
/// App::new().add_plugins((
///     DiagnosticsPlugin,
///     AnyAnglePlugin::default(),
///     PathfindingDiagnosticsPlugin,
/// ));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PathfindingDiagnosticsPlugin;

impl PathfindingDiagnosticsPlugin {
    /// Searches started since the app began.
    pub const SEARCHES_STARTED: DiagnosticPath =
        DiagnosticPath::const_new("anyangle/searches_started");
    /// Searches since the app began that answered a group of agents with
    /// one goal.
    pub const SHARED_SEARCHES: DiagnosticPath =
        DiagnosticPath::const_new("anyangle/shared_searches");
    /// Searches the search threads ran since the app began.
    pub const SEARCHES_FINISHED: DiagnosticPath =
        DiagnosticPath::const_new("anyangle/searches_finished");
    /// Searches cancelled since the app began.
    pub const SEARCHES_CANCELLED: DiagnosticPath =
        DiagnosticPath::const_new("anyangle/searches_cancelled");
    /// Results thrown away since the app began.
    pub const RESULTS_DISCARDED: DiagnosticPath =
        DiagnosticPath::const_new("anyangle/results_discarded");
    /// Agents waiting to be sent to the search threads.
    pub const QUEUE_LENGTH: DiagnosticPath = DiagnosticPath::const_new("anyangle/queue_length");
    /// Searches sent to the search threads and not yet applied.
    pub const IN_FLIGHT: DiagnosticPath = DiagnosticPath::const_new("anyangle/in_flight");
    /// The mean time of the searches that finished since the last frame that
    /// had any, in milliseconds (no measurement in frames where none did).
    pub const MEAN_SEARCH_TIME: DiagnosticPath =
        DiagnosticPath::const_new("anyangle/mean_search_time");
    /// What the plugin's systems cost the frame, in milliseconds
    /// ([`PathfindingDiagnostics::frame_cost`]).
    pub const FRAME_COST: DiagnosticPath = DiagnosticPath::const_new("anyangle/frame_cost");
    /// In lockstep mode, how long the main thread waited in the frame for
    /// late answers, in milliseconds
    /// ([`PathfindingDiagnostics::lockstep_wait`]).
    pub const LOCKSTEP_WAIT: DiagnosticPath = DiagnosticPath::const_new("anyangle/lockstep_wait");
}

impl Plugin for PathfindingDiagnosticsPlugin {
    fn build(&self, app: &mut App) {
        for path in [
            Self::SEARCHES_STARTED,
            Self::SHARED_SEARCHES,
            Self::SEARCHES_FINISHED,
            Self::SEARCHES_CANCELLED,
            Self::RESULTS_DISCARDED,
            Self::QUEUE_LENGTH,
            Self::IN_FLIGHT,
        ] {
            app.register_diagnostic(Diagnostic::new(path));
        }
        for path in [
            Self::MEAN_SEARCH_TIME,
            Self::FRAME_COST,
            Self::LOCKSTEP_WAIT,
        ] {
            app.register_diagnostic(Diagnostic::new(path).with_suffix("ms"));
        }
        app.add_systems(Last, measure);
    }
}

/// Searches finished and their time at the last mean measured.
#[derive(Default)]
struct LastMean(u64, Duration);

fn measure(
    counters: Option<Res<PathfindingDiagnostics>>,
    mut diagnostics: Diagnostics,
    mut last: Local<LastMean>,
) {
    type P = PathfindingDiagnosticsPlugin;
    let Some(c) = counters else {
        return;
    };
    diagnostics.add_measurement(&P::SEARCHES_STARTED, || c.searches_started as f64);
    diagnostics.add_measurement(&P::SHARED_SEARCHES, || c.shared_searches as f64);
    diagnostics.add_measurement(&P::SEARCHES_FINISHED, || c.searches_finished as f64);
    diagnostics.add_measurement(&P::SEARCHES_CANCELLED, || c.searches_cancelled as f64);
    diagnostics.add_measurement(&P::RESULTS_DISCARDED, || c.results_discarded as f64);
    diagnostics.add_measurement(&P::QUEUE_LENGTH, || c.queued as f64);
    diagnostics.add_measurement(&P::IN_FLIGHT, || c.in_flight as f64);
    diagnostics.add_measurement(&P::FRAME_COST, || c.frame_cost.as_secs_f64() * 1e3);
    diagnostics.add_measurement(&P::LOCKSTEP_WAIT, || c.lockstep_wait.as_secs_f64() * 1e3);
    if c.searches_finished > last.0 {
        let n = c.searches_finished - last.0;
        let time = c.search_time.saturating_sub(last.1);
        diagnostics.add_measurement(&P::MEAN_SEARCH_TIME, || time.as_secs_f64() * 1e3 / n as f64);
        *last = LastMean(c.searches_finished, c.search_time);
    }
}
