//! Each engine's implementation of [`Sim`](crate::Sim): the three Bevy plugins in a headless
//! app ([`bevy_app`]), rapier3d and Box3D driven directly.

use std::marker::PhantomData;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

use crate::{BodyDef, DT, Engine, JointDef, Sim};

/// The collider and body spawning of the Bevy engines whose APIs share avian's names (avian3d,
/// and impetus3d, which mirrors them): `$p` is the engine's prelude. Defines `collider` and
/// `spawn_body` in the module that invokes it.
macro_rules! avian_names {
    ($p:ident) => {
        /// The engine's collider for `shape`.
        fn collider(shape: &Shape) -> $p::Collider {
            match shape {
                Shape::Cuboid(half) => {
                    $p::Collider::cuboid(2.0 * half.x, 2.0 * half.y, 2.0 * half.z)
                }
                Shape::Ball(radius) => $p::Collider::sphere(*radius),
                Shape::Capsule {
                    half_height,
                    radius,
                } => $p::Collider::capsule(*radius, 2.0 * half_height),
                Shape::Cylinder {
                    half_height,
                    radius,
                } => $p::Collider::cylinder(*radius, 2.0 * half_height),
                Shape::Hull(points) => $p::Collider::convex_hull(points.clone()).expect("a hull"),
                Shape::Boxes(boxes) => $p::Collider::compound(
                    boxes
                        .iter()
                        .map(|&(centre, half)| {
                            (centre, Quat::IDENTITY, collider(&Shape::Cuboid(half)))
                        })
                        .collect(),
                ),
                Shape::Heightfield {
                    heights,
                    samples,
                    size,
                } => $p::Collider::heightfield(
                    heights.chunks(*samples).map(<[f32]>::to_vec).collect(),
                    *size,
                ),
                Shape::Trimesh {
                    vertices,
                    triangles,
                } => $p::Collider::trimesh(vertices.clone(), triangles.clone()),
            }
        }

        /// Spawns `body` with its collider, never asleep.
        fn spawn_body(world: &mut World, body: &BodyDef) -> Entity {
            let kind = match body.motion {
                Motion::Static => $p::RigidBody::Static,
                Motion::Dynamic => $p::RigidBody::Dynamic,
                Motion::Kinematic => $p::RigidBody::Kinematic,
            };
            let mut entity = world.spawn((
                kind,
                transform(body),
                $p::LinearVelocity(body.linear_velocity),
                $p::AngularVelocity(body.angular_velocity),
            ));
            if let Some(shape) = &body.shape {
                entity.insert(collider(shape));
            }
            if body.motion == Motion::Dynamic {
                entity.insert($p::SleepingDisabled);
            }
            if !body.collides {
                entity.insert($p::CollisionLayers::NONE);
            }
            entity.id()
        }
    };
}

mod avian;
mod bevy_rapier;
mod box3d;
mod impetus;
mod rapier;

/// An empty world of `engine`.
pub fn new_sim(engine: Engine) -> Box<dyn Sim> {
    match engine {
        Engine::Impetus => Box::new(BevySim::<impetus::Impetus>::new()),
        Engine::BevyRapier => Box::new(BevySim::<bevy_rapier::BevyRapier>::new()),
        Engine::Avian => Box::new(BevySim::<avian::Avian>::new()),
        Engine::Rapier => Box::new(rapier::RapierSim::new()),
        Engine::Box3d => Box::new(box3d::Box3dSim::new()),
    }
}

/// A Bevy physics plugin, as the scenes use it.
trait BevyEngine {
    /// Adds the plugin (and its settings) to an app that steps by [`DT`] per update.
    fn add_plugin(app: &mut App);
    /// Spawns a body.
    fn spawn(world: &mut World, body: &BodyDef) -> Entity;
    /// Spawns a joint between the bodies `a` and `b`.
    fn joint(world: &mut World, joint: &JointDef, a: Entity, b: Entity);
    /// See [`Sim::snapshot_cost`].
    fn snapshot_cost(_world: &mut World) -> Option<crate::SnapshotCost> {
        None
    }
}

/// A headless app with one of the Bevy engines: every update is one physics step.
struct BevySim<E> {
    app: App,
    bodies: Vec<Entity>,
    engine: PhantomData<E>,
}

impl<E: BevyEngine> BevySim<E> {
    fn new() -> Self {
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .insert_resource(Time::<Fixed>::from_seconds(DT))
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
                DT,
            )));
        E::add_plugin(&mut app);
        // What `App::run` does before its first update and a hand-stepped app must do itself.
        app.finish();
        app.cleanup();
        app.update();
        Self {
            app,
            bodies: Vec::new(),
            engine: PhantomData,
        }
    }
}

impl<E: BevyEngine> Sim for BevySim<E> {
    fn add_body(&mut self, body: &BodyDef) -> usize {
        let entity = E::spawn(self.app.world_mut(), body);
        self.bodies.push(entity);
        self.bodies.len() - 1
    }

    fn add_joint(&mut self, joint: &JointDef) {
        let (a, b) = (self.bodies[joint.a], self.bodies[joint.b]);
        E::joint(self.app.world_mut(), joint, a, b);
    }

    fn step(&mut self) {
        self.app.update();
    }

    fn pose(&self, body: usize) -> (Vec3, Quat) {
        let t = self
            .app
            .world()
            .get::<Transform>(self.bodies[body])
            .expect("a body has a Transform");
        (t.translation, t.rotation)
    }

    fn snapshot_cost(&mut self) -> Option<crate::SnapshotCost> {
        E::snapshot_cost(self.app.world_mut())
    }
}

/// A body's `Transform`.
fn transform(body: &BodyDef) -> Transform {
    Transform::from_translation(body.position).with_rotation(body.rotation)
}

/// The corners of a 16-sided prism of `radius` and height `2 × half_height` along Y: the
/// cylinder of an engine without a round one.
fn prism(half_height: f32, radius: f32) -> Vec<Vec3> {
    (0..32)
        .map(|i| {
            let angle = (i / 2) as f32 * std::f32::consts::TAU / 16.0;
            let y = if i % 2 == 0 {
                -half_height
            } else {
                half_height
            };
            Vec3::new(radius * angle.cos(), y, radius * angle.sin())
        })
        .collect()
}
