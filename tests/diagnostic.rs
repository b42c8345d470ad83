//! The plugin's counters as Bevy diagnostics.

use std::time::Duration;

use bevy_anyangle::plugin::diagnostic::PathfindingDiagnosticsPlugin;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPosition, PathRequest, PathStatus,
    PathfindingDiagnostics,
};
use bevy_app::{App, TaskPoolPlugin};
use bevy_diagnostic::{DiagnosticPath, DiagnosticsPlugin, DiagnosticsStore};
use bevy_math::Vec2;

fn value(app: &App, path: &DiagnosticPath) -> f64 {
    app.world()
        .resource::<DiagnosticsStore>()
        .get(path)
        .and_then(bevy_diagnostic::Diagnostic::value)
        .unwrap_or_else(|| panic!("no measurement of {path}"))
}

#[test]
fn searches_and_costs_show_as_diagnostics() {
    type P = PathfindingDiagnosticsPlugin;
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        DiagnosticsPlugin,
        AnyAnglePlugin::default(),
        PathfindingDiagnosticsPlugin,
    ));
    let mut rows = vec![".".repeat(40); 40];
    rows[20] = format!("{}{}", "@".repeat(36), "....");
    app.insert_resource(NavGrid::from_ascii(&rows.join("\n"), GridTransform::default()).unwrap());
    let agents: Vec<_> = (0..50)
        .map(|i| {
            let x = 0.5 + (i % 10) as f32;
            app.world_mut()
                .spawn((
                    NavPosition(Vec2::new(x, 2.5 + (i / 10) as f32)),
                    PathRequest::to(Vec2::new(x, 37.5)),
                ))
                .id()
        })
        .collect();
    app.finish();
    app.cleanup();
    let mut done = false;
    for _ in 0..3000 {
        app.update();
        done = agents
            .iter()
            .all(|&e| *app.world().get::<PathStatus>(e).unwrap() == PathStatus::Ready);
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(done, "every agent gets a path");
    app.update();
    let counters = *app.world().resource::<PathfindingDiagnostics>();
    assert!(counters.searches_started >= 50, "{counters:?}");
    assert!(counters.searches_finished >= 50, "{counters:?}");
    assert!(counters.search_time > Duration::ZERO, "{counters:?}");
    assert!(counters.mean_search_time() > Duration::ZERO, "{counters:?}");
    assert!(counters.frame_cost > Duration::ZERO, "{counters:?}");
    assert_eq!(
        value(&app, &P::SEARCHES_STARTED),
        counters.searches_started as f64
    );
    assert_eq!(
        value(&app, &P::SEARCHES_FINISHED),
        counters.searches_finished as f64
    );
    assert_eq!(
        value(&app, &P::SEARCHES_CANCELLED),
        counters.searches_cancelled as f64
    );
    assert_eq!(
        value(&app, &P::RESULTS_DISCARDED),
        counters.results_discarded as f64
    );
    assert_eq!(value(&app, &P::QUEUE_LENGTH), 0.0);
    assert_eq!(value(&app, &P::IN_FLIGHT), 0.0);
    assert!(value(&app, &P::MEAN_SEARCH_TIME) > 0.0);
    assert!(value(&app, &P::FRAME_COST) > 0.0);
    // Not in lockstep mode: nothing waited for.
    assert_eq!(value(&app, &P::LOCKSTEP_WAIT), 0.0);
}

#[test]
fn without_the_pathfinding_plugin_nothing_is_measured() {
    let mut app = App::new();
    app.add_plugins((DiagnosticsPlugin, PathfindingDiagnosticsPlugin));
    app.update();
    let store = app.world().resource::<DiagnosticsStore>();
    let frame_cost = store
        .get(&PathfindingDiagnosticsPlugin::FRAME_COST)
        .unwrap();
    assert_eq!(frame_cost.value(), None);
}
