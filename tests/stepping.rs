//! The step contract: after the first `update`, each `app.update()` runs exactly one physics
//! step of `Time<Fixed>`'s timestep, divided into `SubstepCount` substeps.

use crate::common;

use common::*;
use impetus3d::prelude::*;

#[test]
fn one_physics_step_per_update() {
    let mut app = app();
    let start = steps(&app);
    for i in 1..=10u64 {
        app.update();
        // Exact count: one step per update, no accumulator drift allowed.
        assert_eq!(steps(&app), start + i, "after {i} updates");
    }
}

#[test]
fn step_time_is_the_fixed_timestep() {
    let mut app = app();
    step(&mut app, 3);
    let time = *app.world().resource::<PhysicsStepTime>();
    // 1/64 and 1/256 are exact in binary floating point, so equality is exact.
    assert_eq!(time.delta, DT);
    assert_eq!(time.substeps, 4);
    assert_eq!(time.substep_delta, DT / 4.0);
}

#[test]
fn substep_count_changes_the_substep_length() {
    let mut app = app();
    app.insert_resource(SubstepCount(8));
    app.update();
    let time = *app.world().resource::<PhysicsStepTime>();
    assert_eq!(time.substeps, 8);
    // DT / 8 = 2^-9, exact.
    assert_eq!(time.substep_delta, DT / 8.0);
}

#[test]
fn other_timesteps_also_step_once_per_update() {
    let mut app = app_with_dt(1.0 / 50.0);
    let start = steps(&app);
    step(&mut app, 25);
    assert_eq!(steps(&app), start + 25);
    let time = *app.world().resource::<PhysicsStepTime>();
    // f64 1/50 converted to f32 seconds by bevy's Time: compare within one f32 ulp-scale.
    assert!((time.delta - 0.02).abs() < 1e-6, "delta {}", time.delta);
}

/// Systems ordered against `PhysicsSystems::StepSimulation` in the physics plugin's parent
/// schedule run before and after the step: the one before sees the step count of the last
/// step, the one after the count of the step that just ran.
#[test]
fn systems_ordered_against_the_step_see_it_before_and_after() {
    use bevy::prelude::*;

    #[derive(Resource, Default)]
    struct Seen(Vec<(&'static str, u64)>);

    let mut app = app();
    let seen = |when: &'static str| {
        move |time: Res<PhysicsStepTime>, mut seen: ResMut<Seen>| {
            seen.0.push((when, time.step_count));
        }
    };
    app.init_resource::<Seen>().add_systems(
        FixedPostUpdate,
        (
            seen("after").after(PhysicsSystems::StepSimulation),
            seen("before").before(PhysicsSystems::StepSimulation),
        ),
    );
    let start = steps(&app);
    app.update();
    assert_eq!(
        app.world().resource::<Seen>().0,
        vec![("before", start), ("after", start + 1)]
    );
}

/// `PhysicsPlugins::default()` (the plugin group, as avian users write it) is the same engine
/// as `PhysicsPlugin::default()`, stepping at the fixed timestep: with frames shorter than a
/// step, both run fewer steps than frames, as many as each other, and a dropped ball lands on
/// the same bits.
#[test]
fn the_plugin_group_by_default_is_the_plugin() {
    use bevy::prelude::*;
    use bevy::time::TimeUpdateStrategy;
    let ball_after_a_second = |group: bool| {
        let dt = std::time::Duration::from_secs_f64(1.0 / 64.0);
        let mut app = App::new();
        app.add_plugins(MinimalPlugins);
        if group {
            app.add_plugins(PhysicsPlugins::default());
        } else {
            app.add_plugins(PhysicsPlugin::default());
        }
        app.insert_resource(Time::<Fixed>::from_duration(dt))
            .insert_resource(TimeUpdateStrategy::ManualDuration(dt / 2));
        app.update();
        ground(&mut app);
        let ball = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.5),
                Transform::from_xyz(0.0, 2.0, 0.0),
            ),
        );
        step(&mut app, 64);
        (
            steps(&app),
            position(&app, ball).to_array().map(f32::to_bits),
        )
    };
    let (steps, landed) = ball_after_a_second(true);
    assert!(steps > 0 && steps < 128, "{steps} steps in 128 frames");
    assert_eq!((steps, landed), ball_after_a_second(false));
}

/// The diagnostics plugin records each stage's time, which add up to the step's (the clock is
/// read once between consecutive stages, so the sum telescopes to the step's time up to f64
/// rounding), and counts the awake bodies and touching pairs: one box resting on the ground.
#[test]
fn diagnostics_time_every_stage_and_count_bodies_and_contacts() {
    use bevy::diagnostic::DiagnosticsStore;
    let mut app = app();
    app.add_plugins(PhysicsDiagnosticsPlugin);
    ground(&mut app);
    spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            SleepingDisabled,
            bevy::prelude::Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    step(&mut app, 10);
    let store = app.world().resource::<DiagnosticsStore>();
    let value =
        |path: &bevy::diagnostic::DiagnosticPath| store.get(path).and_then(|d| d.value()).unwrap();
    let stages: Vec<f64> = PhysicsDiagnostics::STAGES
        .iter()
        .map(|(_, path)| value(path))
        .collect();
    let step_ms = value(&PhysicsDiagnostics::STEP);
    assert!(stages.iter().all(|&ms| ms >= 0.0), "{stages:?}");
    assert!(value(&PhysicsDiagnostics::SOLVER) > 0.0);
    let sum: f64 = stages.iter().sum();
    assert!(
        (sum - step_ms).abs() <= 1e-9 * step_ms.max(1.0),
        "stages {sum} ms, step {step_ms} ms"
    );
    assert_eq!(value(&PhysicsDiagnostics::AWAKE_BODIES), 1.0);
    assert_eq!(value(&PhysicsDiagnostics::TOUCHING_PAIRS), 1.0);
}
