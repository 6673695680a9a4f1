//! Peers whose worlds differ in everything but the level: the same bodies, colliders and joints
//! spawned in the same order, with other `Entity` values, other archetypes and another storage
//! order, step bit-identically (the contract of `impetus3d::body::creation`).

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// How a peer hands out the entities of the level.
#[derive(Clone, Copy, Debug)]
enum Peer {
    /// A fresh world, one spawn per entity.
    Plain,
    /// Entities allocated before the level and handed out in a scrambled order.
    Pool,
    /// Every other entity of the level (bodies, child colliders, joints) carries components of
    /// the game's own, so they live in other archetypes (and tables) than the rest.
    Tagged,
    /// Hundreds of entities spawned and freed first, in a scrambled order, so the level gets
    /// recycled indices in that order.
    Churned,
}

/// A component of the game's own.
#[derive(Component)]
struct Health(#[allow(dead_code)] u32);

/// Spawns entities the way `peer` does.
struct Spawner {
    peer: Peer,
    pool: Vec<Entity>,
    count: usize,
}

/// `items` in a fixed pseudo-random order (Fisher–Yates driven by a xorshift generator).
fn scrambled<T: Copy>(items: &[T]) -> Vec<T> {
    let mut items = items.to_vec();
    let mut state = 0x2545_f491_u32;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        items.swap(i, state as usize % (i + 1));
    }
    items
}

impl Spawner {
    fn new(world: &mut World, peer: Peer) -> Self {
        let mut pool = Vec::new();
        match peer {
            Peer::Pool => {
                let allocated: Vec<Entity> = (0..64).map(|_| world.spawn_empty().id()).collect();
                pool = scrambled(&allocated);
            }
            Peer::Churned => {
                let spawned: Vec<Entity> = (0..500).map(|_| world.spawn_empty().id()).collect();
                for entity in scrambled(&spawned) {
                    world.despawn(entity);
                }
            }
            Peer::Plain | Peer::Tagged => {}
        }
        Self {
            peer,
            pool,
            count: 0,
        }
    }

    fn spawn(&mut self, world: &mut World, bundle: impl Bundle) -> Entity {
        self.count += 1;
        let entity = match self.pool.pop() {
            Some(entity) => {
                world.entity_mut(entity).insert(bundle);
                entity
            }
            None => world.spawn(bundle).id(),
        };
        if matches!(self.peer, Peer::Tagged) && self.count % 2 == 1 {
            world
                .entity_mut(entity)
                .insert((Health(100), Name::new("tagged")));
        }
        entity
    }
}

/// The level: a ground, a stack of five boxes, a ball rolling into it, a chain of six balls on
/// distance joints swinging from a fixed point, a plank turned by a motorised hinge, and a
/// dumbbell (one body, four child colliders) falling onto the ground. Returns the dynamic
/// bodies in the order they were spawned.
fn level(peer: Peer) -> (App, Vec<Entity>) {
    let mut app = app();
    let world = app.world_mut();
    let mut s = Spawner::new(world, peer);
    let mut bodies = Vec::new();
    s.spawn(
        world,
        (
            RigidBody::Static,
            Collider::cuboid(40.0, 1.0, 40.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ),
    );
    for i in 0..5 {
        let x = 0.02 * i as f32;
        bodies.push(s.spawn(
            world,
            (
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                Transform::from_xyz(x, 0.5 + i as f32, 0.0),
            ),
        ));
    }
    bodies.push(s.spawn(
        world,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.4),
            Transform::from_xyz(-5.0, 0.4, 0.3),
            LinearVelocity(Vec3::new(4.0, 0.0, 0.0)),
        ),
    ));
    let anchor = s.spawn(
        world,
        (RigidBody::Static, Transform::from_xyz(5.0, 8.0, 0.0)),
    );
    let mut previous = anchor;
    for i in 1..=6 {
        let link = s.spawn(
            world,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.15),
                Transform::from_xyz(5.0 + 0.5 * i as f32, 8.0, 0.1 * i as f32),
            ),
        );
        s.spawn(
            world,
            DistanceJoint::new(previous, link).with_rest_length(0.5),
        );
        bodies.push(link);
        previous = link;
    }
    let post = s.spawn(
        world,
        (
            RigidBody::Static,
            Collider::cuboid(0.2, 3.0, 0.2),
            Transform::from_xyz(0.0, 1.5, -5.0),
        ),
    );
    let plank = s.spawn(
        world,
        (
            RigidBody::Dynamic,
            Collider::cuboid(2.0, 1.5, 0.1),
            Transform::from_xyz(1.2, 1.5, -5.0),
        ),
    );
    s.spawn(
        world,
        RevoluteJoint::new(post, plank)
            .with_local_anchor1(Vec3::new(0.1, 0.0, 0.0))
            .with_local_anchor2(Vec3::new(-1.1, 0.0, 0.0))
            .with_hinge_axis(Vec3::Y)
            .with_motor(JointMotor::velocity(1.0, 50.0)),
    );
    bodies.push(plank);
    let dumbbell = s.spawn(
        world,
        (
            RigidBody::Dynamic,
            Transform::from_xyz(-3.0, 2.0, 4.0).with_rotation(Quat::from_rotation_z(0.3)),
        ),
    );
    // Four parts: floating-point sums of more than two depend on the order they are added in.
    for (x, y, radius) in [
        (-0.5, 0.0, 0.3),
        (0.61, 0.03, 0.07),
        (0.13, 0.27, 0.19),
        (0.3, -0.2, 0.11),
    ] {
        s.spawn(
            world,
            (
                Collider::sphere(radius),
                Transform::from_xyz(x, y, 0.0),
                ChildOf(dumbbell),
            ),
        );
    }
    bodies.push(dumbbell);
    (app, bodies)
}

type State = [u32; 13];

/// Every body's pose and velocities, as bits.
fn state(app: &App, bodies: &[Entity]) -> Vec<State> {
    bodies
        .iter()
        .map(|&e| {
            let values = [
                position(app, e).to_array().as_slice(),
                rotation(app, e).to_array().as_slice(),
                velocity(app, e).to_array().as_slice(),
                angular_velocity(app, e).to_array().as_slice(),
            ]
            .concat();
            std::array::from_fn(|i| values[i].to_bits())
        })
        .collect()
}

#[test]
fn peers_with_other_entities_archetypes_and_storage_order_stay_bit_identical() {
    let (mut reference, bodies) = level(Peer::Plain);
    let mut peers: Vec<(Peer, App, Vec<Entity>)> = [Peer::Pool, Peer::Tagged, Peer::Churned]
        .into_iter()
        .map(|peer| {
            let (app, bodies) = level(peer);
            (peer, app, bodies)
        })
        .collect();
    // The peers really differ from the reference in what they were meant to.
    let indices = |bodies: &[Entity]| bodies.iter().map(|e| e.index_u32()).collect::<Vec<_>>();
    for (peer, _, peer_bodies) in &peers {
        if !matches!(peer, Peer::Tagged) {
            assert_ne!(indices(peer_bodies), indices(&bodies), "{peer:?}");
        }
    }

    let mut moved = 0.0f32;
    for step in 1..=400 {
        reference.update();
        let expected = state(&reference, &bodies);
        for (peer, app, peer_bodies) in &mut peers {
            app.update();
            let got = state(app, peer_bodies);
            if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
                panic!(
                    "{peer:?} differs from the reference at step {step}, body {i} (spawned \
                     {i}th): {:?} against {:?}",
                    position(app, peer_bodies[i]),
                    position(&reference, bodies[i])
                );
            }
        }
        moved = moved.max(speed(&reference, bodies[5]));
    }
    // The scene did what it is for: the ball rolled into the stack, the hinge turned.
    assert!(moved > 1.0, "the ball never rolled ({moved} m/s)");
    let plank = *bodies.iter().rev().nth(1).unwrap();
    let turned = rotation(&reference, plank).angle_between(Quat::IDENTITY);
    assert!(turned > 1.0, "the motorised hinge turned {turned} rad");
}

/// A rollback restores the counter: a body spawned after the capture, despawned by the
/// rollback and spawned again gets the number it had, so the re-simulated steps order it as
/// the first time; a number inserted explicitly (a rollback library respawning an entity with
/// its saved components) is kept.
#[test]
fn a_restore_numbers_respawned_bodies_as_the_first_time() {
    let mut app = app();
    let body = || (RigidBody::Dynamic, Collider::sphere(0.5));
    spawn(&mut app, body());
    let snapshot = PhysicsSnapshot::capture(app.world_mut());
    let order = |app: &App, e: Entity| app.world().get::<CreationOrder>(e).unwrap().get();
    let first = spawn(&mut app, body());
    let number = order(&app, first);
    step(&mut app, 3);
    snapshot.restore(app.world_mut());
    app.world_mut().despawn(first);
    let again = spawn(&mut app, body());
    assert_eq!(order(&app, again), number);

    let saved = *app.world().get::<CreationOrder>(again).unwrap();
    app.world_mut().despawn(again);
    let respawned = spawn(&mut app, (saved, body()));
    assert_eq!(order(&app, respawned), number);
    let next = spawn(&mut app, body());
    assert_eq!(order(&app, next), number + 1);
}
