//! Helpers shared by the integration tests: a headless app stepped one physics step per update.
#![allow(dead_code)]

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use impetus3d::prelude::*;

/// The physics step the tests use: `Time<Fixed>`'s default, 1/64 s.
pub const DT: f32 = 1.0 / 64.0;

/// A headless app with the physics plugin, advanced so that each further `update` is exactly
/// one physics step.
pub fn app() -> App {
    app_with_dt(DT as f64)
}

/// Like [`app`] with another fixed timestep.
pub fn app_with_dt(dt: f64) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PhysicsPlugin::default()));
    app.insert_resource(Time::<Fixed>::from_seconds(dt));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(dt)));
    app.update();
    app
}

/// Runs `n` physics steps.
pub fn step(app: &mut App, n: usize) {
    for _ in 0..n {
        app.update();
    }
}

/// Number of physics steps run so far.
pub fn steps(app: &App) -> u64 {
    app.world().resource::<PhysicsStepTime>().step_count
}

pub fn position(app: &App, e: Entity) -> Vec3 {
    app.world().get::<Position>(e).unwrap().0
}

pub fn rotation(app: &App, e: Entity) -> Quat {
    app.world().get::<Rotation>(e).unwrap().0
}

pub fn velocity(app: &App, e: Entity) -> Vec3 {
    app.world().get::<LinearVelocity>(e).unwrap().0
}

pub fn angular_velocity(app: &App, e: Entity) -> Vec3 {
    app.world().get::<AngularVelocity>(e).unwrap().0
}

pub fn is_sleeping(app: &App, e: Entity) -> bool {
    app.world().get::<Sleeping>(e).is_some()
}

/// A static ground box whose top face is at y = 0.
pub fn ground(app: &mut App) -> Entity {
    app.world_mut()
        .spawn((
            RigidBody::Static,
            Collider::cuboid(100.0, 1.0, 100.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ))
        .id()
}

/// Spawns a bundle and returns its entity.
pub fn spawn(app: &mut App, bundle: impl Bundle) -> Entity {
    app.world_mut().spawn(bundle).id()
}
