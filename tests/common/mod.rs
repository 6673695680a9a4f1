//! Helpers shared by the integration tests: a headless app stepped one physics step per update.
#![allow(dead_code)]

use bevy::prelude::*;
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
    impetus3d::headless_app(dt)
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

/// A column of `count` unit cubes standing on the [`ground`], each with `extra` added.
pub fn cube_column(app: &mut App, count: usize, extra: impl Bundle + Clone) -> Vec<Entity> {
    (0..count)
        .map(|i| {
            spawn(
                app,
                (
                    RigidBody::Dynamic,
                    Collider::cuboid(1.0, 1.0, 1.0),
                    Transform::from_xyz(0.0, 0.5 + i as f32, 0.0),
                    extra.clone(),
                ),
            )
        })
        .collect()
}

/// Spawns a bundle and returns its entity.
pub fn spawn(app: &mut App, bundle: impl Bundle) -> Entity {
    app.world_mut().spawn(bundle).id()
}

/// Speed of a body's linear velocity, m/s.
pub fn speed(app: &App, e: Entity) -> f32 {
    velocity(app, e).length()
}

/// The solver's mass properties of a body.
pub fn computed_mass(app: &App, e: Entity) -> ComputedMass {
    *app.world().get::<ComputedMass>(e).unwrap()
}

/// Inserts (or replaces) a component on an entity.
pub fn set(app: &mut App, e: Entity, component: impl Bundle) {
    app.world_mut().entity_mut(e).insert(component);
}

/// Gravity's magnitude, m/s² (the default `Gravity`).
pub fn g() -> f32 {
    -Gravity::default().0.y
}

/// The contact tolerance the solver is allowed to leave as penetration.
pub fn slop() -> f32 {
    SolverConfig::default().linear_slop
}

/// True if every body's pose and velocities are finite.
pub fn all_bodies_finite(app: &mut App) -> bool {
    let world = app.world_mut();
    let mut query = world.query_filtered::<(
        &Position,
        &Rotation,
        &LinearVelocity,
        &AngularVelocity,
    ), With<RigidBody>>();
    query.iter(world).all(|(p, r, v, w)| {
        p.0.is_finite() && r.0.is_finite() && v.0.is_finite() && w.0.is_finite()
    })
}

/// Runs `f` with every `warn!`/`error!` emitted on this thread captured, and returns the
/// captured messages with `f`'s result. The app must be created and stepped inside `f`; Bevy
/// without `multi_threaded` runs every system on the calling thread, so the thread-local
/// subscriber sees the engine's warnings.
pub fn capture_warnings<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    use bevy::log::tracing;
    use bevy::log::tracing_subscriber::{self, layer::SubscriberExt};
    use std::sync::{Arc, Mutex};

    struct Capture(Arc<Mutex<Vec<String>>>);

    struct Message(String);

    impl tracing::field::Visit for Message {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _ctx: tracing_subscriber::layer::Context<'_, S>,
        ) {
            if *event.metadata().level() <= tracing::Level::WARN {
                let mut message = Message(String::new());
                event.record(&mut message);
                self.0.lock().unwrap().push(message.0);
            }
        }
    }

    let messages = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(Capture(messages.clone()));
    let result = tracing::subscriber::with_default(subscriber, f);
    let messages = messages.lock().unwrap().clone();
    (result, messages)
}
