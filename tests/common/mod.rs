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

/// Like [`app`], with the contact hooks `H`.
pub fn hooked_app<H>() -> App
where
    H: CollisionHooks + 'static,
    for<'w, 's> bevy::ecs::system::SystemParamItem<'w, 's, H>: CollisionHooks,
{
    let step = std::time::Duration::from_secs_f64(f64::from(DT));
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        PhysicsPlugin::default().with_collision_hooks::<H>(),
    ))
    .insert_resource(Time::<Fixed>::from_duration(step))
    .insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(step));
    app.update();
    app
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

/// Saves a world to a RON scene and reads one back into a new app, through Bevy's world
/// serialization: what a game's level and save files go through.
#[cfg(feature = "serialize")]
pub mod level {
    use bevy::asset::{AssetPath, UntypedHandle};
    use bevy::ecs::entity::EntityHashMap;
    use bevy::prelude::*;
    use bevy::world_serialization::serde::WorldDeserializer;
    use bevy::world_serialization::{DynamicWorld, DynamicWorldBuilder};
    use impetus3d::prelude::*;
    use serde::de::DeserializeSeed;

    /// Scenes of physics worlds hold no asset handles.
    struct NoAssets;

    impl bevy::asset::LoadFromPath for NoAssets {
        fn load_from_path_erased(
            &mut self,
            _: std::any::TypeId,
            path: AssetPath<'static>,
        ) -> UntypedHandle {
            panic!("no asset expected, asked for {path}")
        }
    }

    /// Every entity of `app`'s world and the engine's settings resources as RON text: what a
    /// game's level or save file holds. (The same text whichever optional features are on, so
    /// a fuzzer's seed means the same file in every build.)
    pub fn save(app: &App) -> String {
        let world = app.world();
        let registry = world.resource::<AppTypeRegistry>().read();
        let entities: Vec<Entity> = world.iter_entities().map(|e| e.id()).collect();
        let mut scene = DynamicWorldBuilder::from_world(world, &registry)
            .allow_resource::<Gravity>()
            .allow_resource::<SubstepCount>()
            .allow_resource::<SolverConfig>()
            .allow_resource::<XpbdIterations>()
            .allow_resource::<SleepThreshold>()
            .allow_resource::<ThreadUse>()
            .extract_entities(entities.into_iter())
            .extract_resources()
            .build();
        // Entities with nothing the registry knows (Bevy's own, which depend on its features).
        scene.entities.retain(|e| !e.components.is_empty());
        scene.serialize(&registry).unwrap()
    }

    /// Reads the RON scene `text` with `app`'s type registry.
    pub fn read(app: &App, text: &str) -> Result<DynamicWorld, String> {
        let registry = app.world().resource::<AppTypeRegistry>().clone();
        let mut deserializer = ron::de::Deserializer::from_str(text).map_err(|e| e.to_string())?;
        WorldDeserializer {
            type_registry: &registry.read(),
            load_from_path: &mut NoAssets,
        }
        .deserialize(&mut deserializer)
        .map_err(|e| e.to_string())
    }

    /// Writes `text` into `app`'s world, returning the scene's entities mapped to the world's.
    pub fn load_into(app: &mut App, text: &str) -> Result<EntityHashMap<Entity>, String> {
        let scene = read(app, text)?;
        let mut map = EntityHashMap::default();
        scene
            .write_to_world(app.world_mut(), &mut map)
            .map_err(|e| e.to_string())?;
        Ok(map)
    }
}

/// Reading and editing RON text by its brackets, for tampering with saved levels.
#[cfg(feature = "serialize")]
pub mod ron_text {
    use std::ops::Range;

    /// The spans of the top-level items of the list that starts at the first `[` after
    /// `at` (the items' text, without separating commas or surrounding space).
    pub fn list_items(text: &str, at: usize) -> Vec<Range<usize>> {
        let open = at + text[at..].find('[').expect("a list");
        let mut items = Vec::new();
        let (mut depth, mut start) = (0usize, open + 1);
        for (i, c) in text[open..].char_indices().map(|(i, c)| (open + i, c)) {
            match c {
                '[' | '(' | '{' => depth += 1,
                ']' | ')' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        items.push(start..i);
                        break;
                    }
                }
                ',' if depth == 1 => {
                    items.push(start..i);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items
            .into_iter()
            .map(|r| trim(text, r))
            .filter(|r| !r.is_empty())
            .collect()
    }

    fn trim(text: &str, r: Range<usize>) -> Range<usize> {
        let s = &text[r.clone()];
        let start = r.start + (s.len() - s.trim_start().len());
        let end = r.end - (s.len() - s.trim_end().len());
        start..end.max(start)
    }

    /// `text` with the list after the first `field` following `anchor` rewritten by `edit`
    /// (given the items' texts, returning the new ones).
    pub fn edit_list(
        text: &str,
        anchor: &str,
        field: &str,
        edit: impl FnOnce(Vec<String>) -> Vec<String>,
    ) -> String {
        let at = text.find(anchor).expect("the anchor");
        let at = at + text[at..].find(field).expect("the field");
        let items = list_items(text, at);
        let open = at + text[at..].find('[').unwrap();
        let close = match items.last() {
            Some(last) => last.end + text[last.end..].find(']').unwrap(),
            None => open + text[open..].find(']').unwrap(),
        };
        let new = edit(items.iter().map(|r| text[r.clone()].to_string()).collect());
        format!(
            "{}[{}]{}",
            &text[..open],
            new.join(", "),
            &text[close + 1..]
        )
    }
}

/// Makes Bevy's compute task pool two threads. Call it before the first app of a test binary
/// is made: the pool is made once per process, and Bevy's default on a two-core machine is one
/// compute thread, with which the parallel stages never share out.
pub fn two_compute_threads() {
    bevy::tasks::ComputeTaskPool::get_or_init(|| {
        bevy::tasks::TaskPoolBuilder::new().num_threads(2).build()
    });
}

/// Runs `f`, aborting the test process with a message naming `what` if it has not returned
/// after `seconds`: a hang fails the run instead of stalling it.
pub fn with_deadline<R>(seconds: u64, what: &str, f: impl FnOnce() -> R) -> R {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// Tells the watchdog that `f` is over, however it ended.
    struct Done(Arc<AtomicBool>);
    impl Drop for Done {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let done = Done(Arc::new(AtomicBool::new(false)));
    let watched = done.0.clone();
    let what = what.to_string();
    std::thread::spawn(move || {
        let start = Instant::now();
        while !watched.load(Ordering::SeqCst) {
            if start.elapsed() > Duration::from_secs(seconds) {
                eprintln!("{what}: not done after {seconds} s, hung");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    f()
}
