//! Rollback snapshots: after `PhysicsSnapshot::restore`, the steps that follow repeat the steps
//! that followed the capture bit for bit, whatever the world did in between.
//!
//! One scene exercises every piece of carried state: a resting stack (warm-started contacts), a
//! box sliding with friction that comes to rest and falls asleep, a bouncing ball (restitution,
//! `CollidingEntities`, a ray caster), a sleeping box that a falling ball wakes, a pendulum
//! whose joint breaks after the capture, a joint chain of every XPBD kind with a motor and
//! limits, a D6 joint (velocity rows, warm started), a character controller pushing a box, a
//! box on a conveyor driven by a contact hook, and a compound and a ball going down a
//! triangle-mesh ramp.
//! The state of every body (bit patterns of its pose, velocities and transform), every joint's
//! read-back, the contacts with their impulses, the character's state, the casters' hits and a
//! spatial query are compared at every step.

use crate::common;

use bevy::ecs::system::{RunSystemOnce, SystemParam};
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// Steps before the capture.
const WARM_UP: usize = 40;
/// Steps compared after the capture: long enough for the pendulum's joint to break, the
/// slider to fall asleep and the sleeper to be woken.
const COMPARED: usize = 150;

/// A unit cube resting on the ground (see `common::ground`).
fn cube_on_ground(app: &mut App) -> Entity {
    ground(app);
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    )
}

/// The test app, with the scene's contact hooks.
fn app() -> App {
    hooked_app::<SceneHooks>()
}

/// The scene's contact hooks. A conveyor belt: what touches a collider with
/// [`ActiveCollisionHooks::MODIFY_CONTACTS`] is driven along x with more friction. A
/// [`Ghost`]'s contacts are dropped. Their changes are in force between steps, so a snapshot
/// carries them.
#[derive(SystemParam)]
struct SceneHooks<'w, 's> {
    ghosts: Query<'w, 's, (), With<Ghost>>,
}

#[derive(Component)]
struct Ghost;

impl CollisionHooks for SceneHooks<'_, '_> {
    fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
        if self.ghosts.contains(contacts.collider1) || self.ghosts.contains(contacts.collider2) {
            return false;
        }
        contacts.set_tangent_velocity(Vec3::new(0.5, 0.0, 0.0));
        contacts.set_friction(0.8);
        true
    }
}

/// The entities of the scene.
struct Scene {
    /// Every body, in spawn order.
    bodies: Vec<Entity>,
    slider: Entity,
    ball: Entity,
    sleeper: Entity,
    settler: Entity,
    pendulum_joint: Entity,
    chain: Vec<Entity>,
    character: Entity,
    /// One entity of each joint kind in the chain (revolute, spherical, distance, prismatic,
    /// fixed) and the D6 joint.
    revolute: Entity,
    spherical: Vec<Entity>,
    distance: Entity,
    prismatic: Entity,
    fixed: Entity,
    /// The swing-cone D6 joint, then a chain of three ball-like D6 joints.
    d6: Vec<Entity>,
}

fn body(app: &mut App, bundle: impl Bundle, bodies: &mut Vec<Entity>) -> Entity {
    let entity = spawn(app, bundle);
    bodies.push(entity);
    entity
}

/// Spawns the scene. The pendulum's breakable spherical joint is spawned before the chain's
/// spherical joints, so that its breaking moves them in the ECS storage.
fn scene(app: &mut App) -> Scene {
    let mut bodies = Vec::new();
    let b = &mut bodies;
    body(
        app,
        (
            RigidBody::Static,
            Collider::cuboid(100.0, 1.0, 100.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ),
        b,
    );
    // A stack that stays awake, so its warm-started contacts are solved every step.
    for i in 0..3 {
        body(
            app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                SleepingDisabled,
                Transform::from_xyz(0.0, 0.5 + i as f32, 0.0),
            ),
            b,
        );
    }
    let slider = body(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Friction::new(0.4),
            LinearVelocity(Vec3::new(4.0, 0.0, 0.0)),
            ShapeCaster::new(
                Collider::sphere(0.2),
                Vec3::ZERO,
                Quat::IDENTITY,
                Dir3::NEG_Y,
            ),
            Transform::from_xyz(10.0, 0.5, 0.0),
        ),
        b,
    );
    let ball = body(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Restitution::new(0.8),
            CollidingEntities::default(),
            RayCaster::new(Vec3::ZERO, Dir3::NEG_Y),
            Transform::from_xyz(-10.0, 5.0, 0.0),
        ),
        b,
    );
    // Asleep by the capture; the ball above lands on it after.
    let sleeper = body(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(20.0, 0.5, 0.0),
        ),
        b,
    );
    body(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.3),
            CollidingEntities::default(),
            Transform::from_xyz(20.2, 14.0, 0.1),
        ),
        b,
    );
    // Dropped onto the ground: at rest, but not yet asleep, at the capture.
    let settler = body(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(-5.0, 0.8, -5.0),
        ),
        b,
    );
    // A ball resting on the ground, awake: its recycled manifold keeps the ground's normal
    // in the ground's frame (the pair's second collider).
    body(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.4),
            SleepingDisabled,
            Transform::from_xyz(-8.0, 0.4, -5.0),
        ),
        b,
    );
    // A floor of tiles flush with the ground, for nearest-hit queries that meet several
    // colliders at exactly the same distance (see `query`).
    for i in 0..4 {
        for j in 0..4 {
            body(
                app,
                (
                    RigidBody::Static,
                    Collider::cuboid(1.0, 1.0, 1.0),
                    Transform::from_xyz(30.5 + i as f32, -0.5, -1.5 + j as f32),
                ),
                b,
            );
        }
    }

    // A 10 m pendulum released horizontally; its joint holds 2 m g, which the swing exceeds
    // near the bottom, well after the capture.
    let pivot = body(
        app,
        (RigidBody::Static, Transform::from_xyz(0.0, 12.0, -10.0)),
        b,
    );
    let bob = body(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.3),
            Mass(1.0),
            Transform::from_xyz(10.0, 12.0, -10.0),
        ),
        b,
    );
    let pendulum_joint = spawn(
        app,
        SphericalJoint::new(pivot, bob)
            .with_local_anchor2(Vec3::new(-10.0, 0.0, 0.0))
            .with_break_force(2.0 * g()),
    );

    // A horizontal chain released to swing: revolute (motor, limits), three spherical, a
    // distance joint that adopts its rest length, a prismatic joint with limits, a fixed joint.
    let anchor = body(
        app,
        (RigidBody::Static, Transform::from_xyz(0.0, 10.0, 10.0)),
        b,
    );
    let mut chain = vec![anchor];
    for i in 0..7 {
        let link = body(
            app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(0.8, 0.2, 0.2),
                CollisionLayers::NONE,
                SleepingDisabled,
                Transform::from_xyz(1.0 + i as f32, 10.0, 10.0),
            ),
            b,
        );
        chain.push(link);
    }
    let (half, minus) = (Vec3::new(0.5, 0.0, 0.0), Vec3::new(-0.5, 0.0, 0.0));
    let revolute = spawn(
        app,
        RevoluteJoint::new(chain[0], chain[1])
            .with_local_anchor1(Vec3::new(0.5, 0.0, 0.0))
            .with_local_anchor2(minus)
            .with_angle_limits(-1.0, 1.0)
            .with_motor(JointMotor::velocity(1.5, 20.0)),
    );
    let spherical = (1..4)
        .map(|i| {
            spawn(
                app,
                SphericalJoint::new(chain[i], chain[i + 1])
                    .with_local_anchor1(half)
                    .with_local_anchor2(minus)
                    .with_swing_limits(-0.8, 0.8),
            )
        })
        .collect();
    let distance = spawn(
        app,
        DistanceJoint::new(chain[4], chain[5])
            .with_local_anchor1(half)
            .with_local_anchor2(minus),
    );
    let prismatic = spawn(
        app,
        PrismaticJoint::new(chain[5], chain[6])
            .with_local_anchor1(half)
            .with_local_anchor2(minus)
            .with_slider_axis(Vec3::X)
            .with_limits(-0.1, 0.1),
    );
    let fixed = spawn(
        app,
        FixedJoint::new(chain[6], chain[7])
            .with_local_anchor1(half)
            .with_local_anchor2(minus),
    );

    // A D6 joint: a bar swinging into a swing cone, its twist free and driven.
    let d6_anchor = body(
        app,
        (RigidBody::Static, Transform::from_xyz(5.0, 10.0, 20.0)),
        b,
    );
    let bar = body(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 0.2, 0.2),
            CollisionLayers::NONE,
            SleepingDisabled,
            Transform::from_xyz(5.5, 10.0, 20.0),
        ),
        b,
    );
    let mut d6 = vec![spawn(
        app,
        D6Joint::new(d6_anchor, bar)
            .with_local_anchor2(Vec3::new(-0.5, 0.0, 0.0))
            .with_swing_cone(0.6, 0.6)
            .with_motion(D6Axis::Twist, D6Motion::Free)
            .with_drive(D6Axis::Twist, D6Drive::motor(5.0))
            .with_drive_target(D6Axis::Twist, 0.0, 2.0),
    )];
    // Ball joints on velocity rows, released horizontally.
    let mut previous = body(
        app,
        (RigidBody::Static, Transform::from_xyz(0.0, 10.0, 30.0)),
        b,
    );
    for i in 0..3 {
        let link = body(
            app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(0.8, 0.2, 0.2),
                CollisionLayers::NONE,
                SleepingDisabled,
                Transform::from_xyz(1.0 + i as f32, 10.0, 30.0),
            ),
            b,
        );
        let free = [D6Axis::Twist, D6Axis::Swing1, D6Axis::Swing2];
        let joint = free.into_iter().fold(
            D6Joint::new(previous, link)
                .with_local_anchor1(if i == 0 { Vec3::ZERO } else { half })
                .with_local_anchor2(minus),
            |joint, axis| joint.with_motion(axis, D6Motion::Free),
        );
        d6.push(spawn(app, joint));
        previous = link;
    }

    // A character walking into a box that slides towards it: the box pushes the character back
    // (meeting about 1.2 s in, inside the compared steps), then the character pushes it along.
    let character = body(
        app,
        (
            CharacterController {
                desired_velocity: Vec3::new(1.5, 0.0, 0.0),
                ..default()
            },
            Collider::capsule(0.3, 1.0),
            Transform::from_xyz(-20.0, 1.2, 5.0),
        ),
        b,
    );
    body(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(0.6, 0.6, 0.6),
            Transform::from_xyz(-14.0, 0.3, 5.0),
            LinearVelocity(Vec3::new(-6.0, 0.0, 0.0)),
        ),
        b,
    );

    // A box carried by a conveyor (contact-hook changes in the contact graph).
    body(
        app,
        (
            RigidBody::Static,
            Collider::cuboid(8.0, 0.2, 2.0),
            ActiveCollisionHooks::MODIFY_CONTACTS,
            Transform::from_xyz(0.0, 0.1, -20.0),
        ),
        b,
    );
    body(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(0.5, 0.5, 0.5),
            SleepingDisabled,
            Transform::from_xyz(-2.0, 0.45, -20.0),
        ),
        b,
    );
    // A triangle-mesh ramp (slope 0.3) that a two-box compound slides and a ball rolls down:
    // parry's per-pair workspaces and the compound parts' poses in the contact graph.
    let ramp = [
        Vec3::new(36.0, 3.0, -24.0),
        Vec3::new(46.0, 0.0, -24.0),
        Vec3::new(46.0, 0.0, -16.0),
        Vec3::new(36.0, 3.0, -16.0),
    ];
    body(
        app,
        (
            RigidBody::Static,
            Collider::trimesh(ramp.to_vec(), vec![[0, 2, 1], [0, 3, 2]]),
        ),
        b,
    );
    let part = || Collider::cuboid(0.6, 0.4, 0.6);
    body(
        app,
        (
            RigidBody::Dynamic,
            Collider::compound(vec![
                (Vec3::new(-0.3, 0.0, 0.0), Quat::IDENTITY, part()),
                (Vec3::new(0.3, 0.2, 0.0), Quat::from_rotation_y(0.5), part()),
            ]),
            Friction::new(0.1),
            Transform::from_xyz(38.0, 2.9, -22.0),
        ),
        b,
    );
    body(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.3),
            Transform::from_xyz(38.0, 2.75, -18.0),
        ),
        b,
    );

    Scene {
        bodies,
        slider,
        ball,
        sleeper,
        settler,
        pendulum_joint,
        chain,
        character,
        revolute,
        spherical,
        distance,
        prismatic,
        fixed,
        d6,
    }
}

fn bits(v: Vec3) -> String {
    format!(
        "{:08x}{:08x}{:08x}",
        v.x.to_bits(),
        v.y.to_bits(),
        v.z.to_bits()
    )
}

fn qbits(q: Quat) -> String {
    format!("{}{:08x}", bits(q.xyz()), q.w.to_bits())
}

/// The readback of an XPBD joint: force, torque, broken, disabled.
fn joint_line<J: Joint>(app: &App, joint: Entity) -> String {
    let Some(j) = app.world().get::<J>(joint) else {
        return format!("joint {joint}: gone");
    };
    let disabled = app.world().get::<ConstraintDisabled>(joint).is_some();
    format!(
        "joint {joint}: f {} t {} broken {} disabled {disabled}",
        bits(j.force()),
        bits(j.torque()),
        j.is_broken()
    )
}

/// Everything observable about the simulation, with floats as bit patterns.
fn fingerprint(app: &mut App, scene: &Scene) -> Vec<String> {
    let mut lines = vec![format!("step {}", steps(app))];
    let world = app.world();
    for &e in &scene.bodies {
        let Some(p) = world.get::<Position>(e) else {
            lines.push(format!("{e}: gone"));
            continue;
        };
        let t = world.get::<Transform>(e).unwrap();
        lines.push(format!(
            "{e}: p {} r {} v {} w {} t {} {} sleeping {}",
            bits(p.0),
            qbits(rotation(app, e)),
            bits(velocity(app, e)),
            bits(angular_velocity(app, e)),
            bits(t.translation),
            qbits(t.rotation),
            is_sleeping(app, e),
        ));
    }
    lines.push(joint_line::<SphericalJoint>(app, scene.pendulum_joint));
    lines.push(joint_line::<RevoluteJoint>(app, scene.revolute));
    for &j in &scene.spherical {
        lines.push(joint_line::<SphericalJoint>(app, j));
    }
    lines.push(joint_line::<DistanceJoint>(app, scene.distance));
    lines.push(joint_line::<PrismaticJoint>(app, scene.prismatic));
    lines.push(joint_line::<FixedJoint>(app, scene.fixed));
    for &joint in &scene.d6 {
        let Some(d6) = world.get::<D6Joint>(joint) else {
            continue;
        };
        let impulses: Vec<String> = d6
            .row_impulses()
            .iter()
            .map(|x| format!("{:08x}", x.to_bits()))
            .collect();
        let disabled = world.get::<ConstraintDisabled>(joint).is_some();
        lines.push(format!(
            "d6 {joint}: {} disabled {disabled}",
            impulses.join(" ")
        ));
    }
    for &e in &scene.bodies {
        if let Some(colliding) = world.get::<CollidingEntities>(e) {
            lines.push(format!("{e} touches {:?}", colliding.as_slice()));
        }
    }
    if let Some(hits) = world.get::<RayHits>(scene.ball) {
        for hit in &hits.0 {
            lines.push(format!(
                "ray hit {} {:08x} {}",
                hit.entity,
                hit.distance.to_bits(),
                bits(hit.normal)
            ));
        }
    }
    if let Some(hits) = world.get::<ShapeHits>(scene.slider) {
        for hit in &hits.0 {
            lines.push(format!(
                "shape hit {} {:08x} {} {} {}",
                hit.entity,
                hit.distance.to_bits(),
                bits(hit.point1),
                bits(hit.point2),
                bits(hit.normal1)
            ));
        }
    }
    if let Some(s) = world.get::<CharacterControllerState>(scene.character) {
        lines.push(format!(
            "character: grounded {} n {} on {:?} vy {:08x} push {} v {} climbed {:08x} hits {}",
            s.grounded,
            bits(s.ground_normal),
            s.ground_entity,
            s.vertical_speed.to_bits(),
            bits(s.push_velocity),
            bits(s.velocity),
            s.step_climbed.to_bits(),
            s.hits.len()
        ));
    }
    lines.extend(contacts(app));
    lines.extend(query(app));
    lines
}

/// Every touching pair with its points (impulses and separations).
fn contacts(app: &mut App) -> Vec<String> {
    app.world_mut()
        .run_system_once(|collisions: Collisions| {
            collisions
                .iter()
                .map(|pair| {
                    let points: Vec<String> = pair
                        .points()
                        .map(|c| {
                            format!(
                                "{} {} {:08x} {:08x}",
                                bits(c.point),
                                bits(c.normal),
                                c.separation.to_bits(),
                                c.normal_impulse.to_bits()
                            )
                        })
                        .collect();
                    format!(
                        "pair {} {} (bodies {:?} {:?}): {}",
                        pair.collider1,
                        pair.collider2,
                        pair.body1,
                        pair.body2,
                        points.join(", ")
                    )
                })
                .collect::<Vec<_>>()
        })
        .unwrap()
}

/// Spatial queries as a game would make them between steps: rays straight down through the
/// bouncing ball and the pushed box, and onto the tile floor at tile corners, edges and
/// centres, where several colliders are hit at exactly the same distance (the newest of them
/// is reported, whatever the shape of the query tree, which a restore rebuilds).
fn query(app: &mut App) -> Vec<String> {
    let mut origins = vec![Vec3::new(-10.0, 30.0, 0.0), Vec3::new(-18.5, 30.0, 5.0)];
    for i in 0..7 {
        for j in 0..7 {
            origins.push(Vec3::new(
                31.0 + 0.5 * i as f32,
                30.0,
                -1.0 + 0.5 * j as f32,
            ));
        }
    }
    app.world_mut()
        .run_system_once(move |query: SpatialQuery| {
            origins
                .iter()
                .map(
                    |&origin| match query.cast_ray(origin, Dir3::NEG_Y, 100.0, true, &default()) {
                        Some(hit) => format!(
                            "query {} {:08x} {}",
                            hit.entity,
                            hit.distance.to_bits(),
                            bits(hit.normal)
                        ),
                        None => "query: nothing".to_string(),
                    },
                )
                .collect::<Vec<_>>()
        })
        .unwrap()
}

/// Runs `n` steps, fingerprinting after each.
fn record(app: &mut App, scene: &Scene, n: usize) -> Vec<Vec<String>> {
    (0..n)
        .map(|_| {
            app.update();
            fingerprint(app, scene)
        })
        .collect()
}

/// Panics at the first line that differs, naming the step.
fn assert_same(what: &str, expected: &[Vec<String>], actual: &[Vec<String>]) {
    assert_eq!(expected.len(), actual.len(), "{what}: step counts differ");
    for (k, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e == a {
            continue;
        }
        let line = e.iter().zip(a).position(|(x, y)| x != y);
        match line {
            Some(i) => panic!(
                "{what}: step {} after the restore differs first at\n  expected {}\n  actual   {}",
                k + 1,
                e[i],
                a[i]
            ),
            None => panic!(
                "{what}: step {} after the restore has {} lines, expected {}",
                k + 1,
                a.len(),
                e.len()
            ),
        }
    }
}

/// A scene run to the capture point, with an impulse pending on the slider (applied by the
/// first step after the capture).
fn warmed_up() -> (App, Scene) {
    let mut app = app();
    let scene = scene(&mut app);
    step(&mut app, WARM_UP);
    let kick = ExternalImpulse::new(Vec3::new(0.0, 0.0, 300.0));
    set(&mut app, scene.slider, kick);
    (app, scene)
}

/// The fingerprints of the steps after the capture, and the capture itself.
struct Reference {
    snapshot: PhysicsSnapshot,
    at_capture: Vec<String>,
    steps: Vec<Vec<String>>,
}

fn reference(app: &mut App, scene: &Scene) -> Reference {
    let snapshot = PhysicsSnapshot::capture(app.world_mut());
    let at_capture = fingerprint(app, scene);
    let steps = record(app, scene, COMPARED);
    Reference {
        snapshot,
        at_capture,
        steps,
    }
}

/// Restores and checks that the world looks as it did at the capture, then that the next
/// steps repeat the reference.
fn restore_and_compare(app: &mut App, scene: &Scene, reference: &Reference, what: &str) {
    reference.snapshot.restore(app.world_mut());
    let now = fingerprint(app, scene);
    assert_same(
        &format!("{what} (right after the restore)"),
        std::slice::from_ref(&reference.at_capture),
        &[now],
    );
    let again = record(app, scene, COMPARED);
    assert_same(what, &reference.steps, &again);
}

/// The scene does what the tests rely on within the compared steps.
fn check_scenario(app: &App, scene: &Scene, reference: &Reference) {
    let joint = app.world().get::<SphericalJoint>(scene.pendulum_joint);
    assert!(
        joint.is_some_and(|j| j.is_broken()),
        "the pendulum's joint did not break within the compared steps"
    );
    assert!(
        reference.at_capture[0] == format!("step {WARM_UP}"),
        "{}",
        reference.at_capture[0]
    );
    let sleeping_at = |fingerprint: &Vec<String>, e: Entity| {
        fingerprint
            .iter()
            .any(|l| l.starts_with(&format!("{e}: ")) && l.ends_with("sleeping true"))
    };
    assert!(
        sleeping_at(&reference.at_capture, scene.sleeper),
        "the sleeper is not asleep at the capture"
    );
    assert!(
        reference
            .steps
            .iter()
            .any(|f| !sleeping_at(f, scene.sleeper)),
        "the sleeper was not woken after the capture"
    );
    assert!(
        !sleeping_at(&reference.at_capture, scene.slider) && is_sleeping(app, scene.slider),
        "the slider did not fall asleep after the capture"
    );
    assert!(
        !sleeping_at(&reference.at_capture, scene.settler) && is_sleeping(app, scene.settler),
        "the settler did not fall asleep after the capture"
    );
    let touches: std::collections::HashSet<&String> = reference
        .steps
        .iter()
        .flatten()
        .filter(|l| l.starts_with(&format!("{} touches", scene.ball)))
        .collect();
    assert!(touches.len() >= 2, "the ball did not bounce: {touches:?}");
    let pushing = reference.steps.iter().flatten().any(|l| {
        l.starts_with("character: grounded true") && !l.contains("push 000000000000000000000000")
    });
    assert!(pushing, "the box never pushed back on the character");
}

/// Capture, run, restore, run again: every step repeats bit for bit.
#[test]
fn restore_repeats_the_steps_after_the_capture() {
    let (mut app, scene) = warmed_up();
    let reference = reference(&mut app, &scene);
    check_scenario(&app, &scene, &reference);
    restore_and_compare(&mut app, &scene, &reference, "first restore");
}

/// After the capture the world goes another way: impulses and new velocities, a woken sleeper,
/// a body put to sleep, a joint broken by hand, the character steered, an impulse left pending.
/// The restore undoes all of it.
#[test]
fn restore_after_a_different_path() {
    let (mut app, scene) = warmed_up();
    let reference = reference(&mut app, &scene);
    reference.snapshot.restore(app.world_mut());

    set(
        &mut app,
        scene.ball,
        ExternalImpulse::new(Vec3::new(300.0, 500.0, 0.0)),
    );
    set(
        &mut app,
        scene.chain[3],
        LinearVelocity(Vec3::new(0.0, 5.0, 0.0)),
    );
    app.world_mut()
        .entity_mut(scene.sleeper)
        .remove::<Sleeping>();
    set(&mut app, scene.slider, Sleeping);
    app.world_mut()
        .get_mut::<CharacterController>(scene.character)
        .unwrap()
        .desired_velocity = Vec3::new(-2.0, 0.0, 1.0);
    app.world_mut()
        .get_mut::<CharacterControllerState>(scene.character)
        .unwrap()
        .jump(4.0);
    set(&mut app, scene.d6[1], ConstraintDisabled);
    step(&mut app, 30);
    // Break a chain joint by hand (a break force of zero), and let a few more steps pass.
    app.world_mut()
        .get_mut::<SphericalJoint>(scene.spherical[1])
        .unwrap()
        .base_mut()
        .break_force = Some(0.0);
    step(&mut app, 50);
    assert!(
        app.world()
            .get::<ConstraintDisabled>(scene.spherical[1])
            .is_some(),
        "the chain joint did not break on the other path"
    );
    app.world_mut()
        .get_mut::<CharacterController>(scene.character)
        .unwrap()
        .desired_velocity = Vec3::new(1.5, 0.0, 0.0);
    // Pending at the restore: the snapshot must clear it.
    set(
        &mut app,
        scene.chain[5],
        ExternalImpulse::new(Vec3::new(0.0, 0.0, 50.0)),
    );
    restore_and_compare(&mut app, &scene, &reference, "restore after another path");
}

/// A snapshot can be restored any number of times, including one step after the capture
/// (when the restored step count equals the step count the solver last saw).
#[test]
fn restore_twice_and_after_one_step() {
    let (mut app, scene) = warmed_up();
    let reference = reference(&mut app, &scene);
    reference.snapshot.restore(app.world_mut());
    step(&mut app, 1);
    restore_and_compare(
        &mut app,
        &scene,
        &reference,
        "restore one step after a restore",
    );
    restore_and_compare(&mut app, &scene, &reference, "restore a second time");
    let copy = reference.snapshot.clone();
    restore_and_compare(
        &mut app,
        &scene,
        &Reference {
            snapshot: copy,
            at_capture: reference.at_capture.clone(),
            steps: reference.steps.clone(),
        },
        "restore a clone",
    );
}

/// A body, a chain link and a joint despawned after the capture are reported by name and
/// skipped; everything else is restored and simulates without panicking or going non-finite.
/// A collider spawned after the capture keeps its state, and queries see it at once.
#[test]
fn despawned_entities_are_reported_and_skipped() {
    let (mut app, scene) = warmed_up();
    let snapshot = PhysicsSnapshot::capture(app.world_mut());
    let slider_at_capture = position(&app, scene.slider);
    step(&mut app, 20);
    let gone = [scene.ball, scene.chain[4], scene.distance];
    for e in gone {
        app.world_mut().despawn(e);
    }
    let roof = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(2.0, 0.2, 2.0),
            Transform::from_xyz(-18.5, 20.0, 5.0),
        ),
    );
    let ((), warnings) = capture_warnings(|| snapshot.restore(app.world_mut()));
    for e in gone {
        assert!(
            warnings.iter().any(|w| w.contains(&e.to_string())),
            "no warning names {e}: {warnings:?}"
        );
    }
    assert_eq!(warnings.len(), gone.len(), "{warnings:?}");
    assert_eq!(position(&app, scene.slider), slider_at_capture);
    assert_eq!(steps(&app), WARM_UP as u64);
    // Queries before the next step do not report the despawned ball, and see the roof.
    let hits = query(&mut app);
    assert!(!hits[0].contains(&scene.ball.to_string()), "{}", hits[0]);
    assert!(hits[1].contains(&roof.to_string()), "{}", hits[1]);
    step(&mut app, COMPARED);
    assert!(all_bodies_finite(&mut app));
    assert_eq!(steps(&app), (WARM_UP + COMPARED) as u64);
}

/// A sleeping body whose velocity was set before the capture wakes at the next step, after
/// the restore as it did after the capture.
#[test]
fn a_pending_wake_is_restored() {
    let mut app = app();
    let block = cube_on_ground(&mut app);
    step(&mut app, 60);
    assert!(is_sleeping(&app, block));
    set(&mut app, block, LinearVelocity(Vec3::new(2.0, 0.0, 0.0)));
    let scene = Scene::single(block);
    let reference = reference(&mut app, &scene);
    let awake = |f: &Vec<String>| f.iter().any(|l| l.ends_with("sleeping false"));
    assert!(awake(&reference.steps[0]), "the block was not woken");
    restore_and_compare(&mut app, &scene, &reference, "restore a pending wake");
}

/// A collider spawned just before the capture is not yet in the query tree, which the next
/// frame rebuilds before the step; after a restore it is rebuilt again, so a character walking
/// into the new wall stops at it in both runs.
#[test]
fn a_pending_query_tree_rebuild_is_restored() {
    let mut app = app();
    ground(&mut app);
    let character = spawn(
        &mut app,
        (
            CharacterController {
                desired_velocity: Vec3::new(2.0, 0.0, 0.0),
                ..default()
            },
            Collider::capsule(0.3, 1.0),
            Transform::from_xyz(0.0, 0.81, 0.0),
        ),
    );
    step(&mut app, 20);
    let front = position(&app, character).x + 0.3 + 0.02;
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(0.2, 3.0, 3.0),
            Transform::from_xyz(front + 0.1, 1.5, 0.0),
        ),
    );
    let scene = Scene::single(character);
    let reference = reference(&mut app, &scene);
    assert!(
        position(&app, character).x < front,
        "the character passed the wall"
    );
    restore_and_compare(
        &mut app,
        &scene,
        &reference,
        "restore a pending tree rebuild",
    );
}

impl Scene {
    /// A scene of one body (the other fields are unused placeholders).
    fn single(body: Entity) -> Self {
        Self {
            bodies: vec![body],
            slider: body,
            ball: body,
            sleeper: body,
            settler: body,
            pendulum_joint: body,
            chain: vec![],
            character: body,
            revolute: body,
            spherical: vec![],
            distance: body,
            prismatic: body,
            fixed: body,
            d6: vec![],
        }
    }
}

/// A component with no meaning, to move entities around in the ECS storage.
#[derive(Component)]
struct Shuffle;

/// A world whose storage order differs from its spawn order gives bit-identical results: a
/// restore (or a joint breaking, or any component added and removed) reorders entities in the
/// ECS tables, and joints, velocity constraints and swept bodies are solved in entity-index
/// order, not storage order. Two swept bodies chase each other into a wall (the second is
/// stopped by where the first was moved back to), next to a chain of spherical joints and a
/// chain of D6 joints.
#[test]
fn storage_order_does_not_change_results() {
    let run = |shuffle: bool| {
        let mut app = app();
        spawn(
            &mut app,
            (
                RigidBody::Static,
                Collider::cuboid(0.2, 4.0, 4.0),
                Transform::from_xyz(10.0, 0.0, 0.0),
            ),
        );
        // Fired by impulses, which the broad phase does not foresee: only the sweeps stop
        // them.
        let swept = |x: f32| {
            (
                RigidBody::Dynamic,
                Collider::sphere(0.25),
                Mass(1.0),
                SweptCcd::default().include_dynamic(true),
                ExternalImpulse::new(Vec3::new(400.0, 0.0, 0.0)),
                GravityScale(0.0),
                Transform::from_xyz(x, 0.0, 0.0),
            )
        };
        let lead = spawn(&mut app, swept(7.0));
        let chaser = spawn(&mut app, swept(6.2));
        let mut bodies = vec![lead, chaser];
        let mut first_joints = Vec::new();
        for (z, d6) in [(10.0, false), (20.0, true)] {
            let mut previous = spawn(
                &mut app,
                (RigidBody::Static, Transform::from_xyz(0.0, 5.0, z)),
            );
            for i in 0..4 {
                let link = spawn(
                    &mut app,
                    (
                        RigidBody::Dynamic,
                        Collider::cuboid(0.8, 0.2, 0.2),
                        CollisionLayers::NONE,
                        Transform::from_xyz(1.0 + i as f32, 5.0, z),
                    ),
                );
                let (a1, a2) = (
                    Vec3::new(if i == 0 { 0.0 } else { 0.5 }, 0.0, 0.0),
                    Vec3::new(-0.5, 0.0, 0.0),
                );
                let joint = if d6 {
                    let free = [D6Axis::Twist, D6Axis::Swing1, D6Axis::Swing2];
                    spawn(
                        &mut app,
                        free.into_iter().fold(
                            D6Joint::new(previous, link)
                                .with_local_anchor1(a1)
                                .with_local_anchor2(a2),
                            |joint, axis| joint.with_motion(axis, D6Motion::Free),
                        ),
                    )
                } else {
                    spawn(
                        &mut app,
                        SphericalJoint::new(previous, link)
                            .with_local_anchor1(a1)
                            .with_local_anchor2(a2),
                    )
                };
                if i == 0 {
                    first_joints.push(joint);
                }
                bodies.push(link);
                previous = link;
            }
        }
        if shuffle {
            // Out and back in: each lands at the end of its table.
            for e in [lead, first_joints[0], first_joints[1]] {
                app.world_mut().entity_mut(e).insert(Shuffle);
                app.world_mut().entity_mut(e).remove::<Shuffle>();
            }
        }
        let mut trace = Vec::new();
        for _ in 0..60 {
            app.update();
            for &e in &bodies {
                trace.push(format!(
                    "{} {} {} {}",
                    bits(position(&app, e)),
                    qbits(rotation(&app, e)),
                    bits(velocity(&app, e)),
                    bits(angular_velocity(&app, e))
                ));
            }
        }
        (trace, position(&app, lead), position(&app, chaser))
    };
    let (plain, lead, chaser) = run(false);
    assert!(
        lead.x < 10.0 && chaser.x < lead.x,
        "lead {lead}, chaser {chaser}"
    );
    let (shuffled, ..) = run(true);
    let first = plain.iter().zip(&shuffled).position(|(a, b)| a != b);
    assert!(first.is_none(), "differs at line {first:?}");
}

/// Without the physics plugin there is nothing to capture, and restoring does nothing.
#[test]
fn a_world_without_physics_gives_an_empty_snapshot() {
    let mut world = World::new();
    let e = world.spawn(Transform::default()).id();
    let snapshot = PhysicsSnapshot::capture(&mut world);
    assert_eq!((snapshot.step_count(), snapshot.body_count()), (0, 0));
    snapshot.restore(&mut world);
    assert!(world.get_entity(e).is_ok());
    println!("{snapshot:?}");
}

/// A snapshot's reported size counts what it holds: a box resting on the ground adds its
/// contact pair, with its manifold and four points, to the size of the same box far above the
/// ground.
/// Contact-hook changes in force at the capture are restored. A box sleeps on the ground half
/// inside a static ghost whose hook drops their contacts; once the ghost no longer asks for
/// the hook, the next step undoes the last step's changes and the pair touches. After a
/// restore it must do the same.
#[test]
fn contact_hook_changes_are_restored() {
    let mut app = app();
    let cube = cube_on_ground(&mut app);
    let ghost = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(2.0, 2.0, 2.0),
            Ghost,
            ActiveCollisionHooks::MODIFY_CONTACTS,
            Transform::from_xyz(1.4, 0.5, 0.0),
        ),
    );
    let touching = |app: &mut App| {
        app.world_mut()
            .run_system_once(move |collisions: Collisions| collisions.contains(cube, ghost))
            .unwrap()
    };
    step(&mut app, 120);
    assert!(is_sleeping(&app, cube), "the cube settles and sleeps");
    assert!(!touching(&mut app), "the hook drops the ghost's contacts");

    let snapshot = PhysicsSnapshot::capture(app.world_mut());
    app.world_mut()
        .entity_mut(ghost)
        .remove::<ActiveCollisionHooks>();
    step(&mut app, 1);
    assert!(touching(&mut app), "the ghost's contacts are back");
    snapshot.restore(app.world_mut());
    step(&mut app, 1);
    assert!(
        touching(&mut app),
        "the ghost's contacts are back after the restore"
    );
}

/// Snapshots captured one after the other share the records of bodies at rest and their
/// contact pairs, while those stay the same to the bit: a sleeping cube woken and moved between
/// two captures is restored, with its contacts, to where each capture saw it.
#[test]
fn resting_bodies_are_shared_while_they_stay_the_same() {
    let mut app = app();
    let cube = cube_on_ground(&mut app);
    step(&mut app, 120);
    assert!(is_sleeping(&app, cube), "the cube settles and sleeps");
    let here = (position(&app, cube), contacts(&mut app));
    let resting = PhysicsSnapshot::capture(app.world_mut());
    assert_eq!(resting.shared_bytes(), 0, "nothing to share with yet");
    step(&mut app, 1);
    let still_resting = PhysicsSnapshot::capture(app.world_mut());
    // The ground's and the cube's records (a pose and two velocities each, at least), and
    // their pair's four points (two anchors and an impulse each, at least).
    let bodies = 2 * (3 * size_of::<Vec3>() + size_of::<Quat>());
    let pair = 4 * (2 * size_of::<Vec3>() + size_of::<f32>());
    assert!(
        resting.shared_bytes() >= bodies + pair
            && still_resting.shared_bytes() == resting.shared_bytes(),
        "the ground, the sleeping cube and their contacts are held once: {} and {} bytes shared",
        resting.shared_bytes(),
        still_resting.shared_bytes()
    );

    // Thrown, and back at rest elsewhere: as many records at rest as before, one of them new.
    set(&mut app, cube, LinearVelocity(Vec3::new(3.0, 3.0, 0.0)));
    step(&mut app, 300);
    assert!(is_sleeping(&app, cube), "the cube sleeps again");
    let landed = PhysicsSnapshot::capture(app.world_mut());
    let there = (position(&app, cube), contacts(&mut app));
    assert!(there.0.x > 1.0, "the cube landed elsewhere: {}", there.0);
    assert_eq!(
        landed.shared_bytes(),
        0,
        "the cube's new records are not the old ones"
    );

    for (snapshot, expected) in [
        (&still_resting, &here),
        (&landed, &there),
        (&resting, &here),
    ] {
        snapshot.restore(app.world_mut());
        let restored = (position(&app, cube), contacts(&mut app));
        assert!(
            restored == *expected && is_sleeping(&app, cube),
            "restored to {restored:?}, expected {expected:?}"
        );
    }
}

#[test]
fn the_size_counts_the_contact_points() {
    let size_with_box_at = |y: f32| {
        let mut app = app();
        ground(&mut app);
        spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                Transform::from_xyz(0.0, y, 0.0),
            ),
        );
        step(&mut app, 10);
        let snapshot = PhysicsSnapshot::capture(app.world_mut());
        assert_eq!(snapshot.body_count(), 2);
        snapshot.size_in_bytes()
    };
    let (resting, above) = (size_with_box_at(0.5), size_with_box_at(50.0));
    // Four points, each with at least its position on each body and an impulse.
    let points = 4 * (2 * size_of::<Vec3>() + size_of::<f32>());
    assert!(
        resting >= above + points,
        "{resting} bytes resting, {above} above"
    );
    // Compact: less than the narrow phase's own form holds at the least (the pair, its points,
    // and a manifold's list of them and its two normals), the broad phase's record of the
    // pair included.
    let manifold = size_of::<Vec<u8>>() + 2 * size_of::<Vec3>();
    assert!(
        resting - above < size_of::<ContactPair>() + points + manifold,
        "{resting} bytes resting, {above} above"
    );
}
