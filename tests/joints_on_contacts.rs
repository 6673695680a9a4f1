//! Jointed bodies lying on the ground come to rest, and a joint whose body rests on a contact
//! reports the load it carries.
//!
//! A body held partly by a contact and partly by a joint used to creep: friction was solved in
//! the contact solve and the joint's position correction came after it in each substep, so the
//! velocity projected from that correction slipped the contact points where friction never
//! saw it (two capsules of radii 5.5 and 5 cm joined end to end crawled along the ground at
//! 7-15 mm/s, the ragdoll below at up to 38 mm/s, in proportion to the substep, and the ragdoll
//! never fell asleep). Joints with a body in a contact now also enter the contact solve as
//! velocity blocks (`solver::joints::contact_blocks`); these tests fail without them.

use crate::{common, joints_common};

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::{anchor_error, joint_state};

enum Part {
    Box(Vec3),
    Ball(f32),
    Capsule(f32, f32),
}

/// A ragdoll of eleven parts (box torso and pelvis, ball head, capsule limbs) standing at the
/// origin (the ragdoll of `compare/`), turned by `turn` about the point `(0, 0.9, 0)` and moved
/// to `centre`.
fn ragdoll(app: &mut App, centre: Vec3, turn: Quat) -> Vec<Entity> {
    let parts = [
        (
            Part::Box(Vec3::new(0.18, 0.3, 0.1)),
            Vec3::new(0.0, 1.25, 0.0),
        ),
        (Part::Ball(0.12), Vec3::new(0.0, 1.69, 0.0)),
        (Part::Capsule(0.1, 0.055), Vec3::new(-0.27, 1.36, 0.0)),
        (Part::Capsule(0.1, 0.05), Vec3::new(-0.27, 1.03, 0.0)),
        (Part::Capsule(0.1, 0.055), Vec3::new(0.27, 1.36, 0.0)),
        (Part::Capsule(0.1, 0.05), Vec3::new(0.27, 1.03, 0.0)),
        (Part::Capsule(0.12, 0.07), Vec3::new(-0.1, 0.58, 0.0)),
        (Part::Capsule(0.1, 0.06), Vec3::new(-0.1, 0.2, 0.0)),
        (Part::Capsule(0.12, 0.07), Vec3::new(0.1, 0.58, 0.0)),
        (Part::Capsule(0.1, 0.06), Vec3::new(0.1, 0.2, 0.0)),
        (
            Part::Box(Vec3::new(0.17, 0.07, 0.09)),
            Vec3::new(0.0, 0.87, 0.0),
        ),
    ];
    let place = |local: Vec3| centre + turn * (local - Vec3::Y * 0.9);
    let bodies: Vec<Entity> = parts
        .iter()
        .map(|(part, at)| {
            let collider = match *part {
                Part::Box(h) => Collider::cuboid(2.0 * h.x, 2.0 * h.y, 2.0 * h.z),
                Part::Ball(r) => Collider::sphere(r),
                Part::Capsule(half, r) => Collider::capsule(r, 2.0 * half),
            };
            let transform = Transform::from_translation(place(*at)).with_rotation(turn);
            spawn(app, (RigidBody::Dynamic, collider, transform))
        })
        .collect();
    let joints = [
        (0, 1, Vec3::new(0.0, 1.56, 0.0), false),
        (0, 2, Vec3::new(-0.27, 1.53, 0.0), false),
        (2, 3, Vec3::new(-0.27, 1.19, 0.0), true),
        (0, 4, Vec3::new(0.27, 1.53, 0.0), false),
        (4, 5, Vec3::new(0.27, 1.19, 0.0), true),
        (0, 10, Vec3::new(0.0, 0.945, 0.0), false),
        (10, 6, Vec3::new(-0.1, 0.785, 0.0), false),
        (6, 7, Vec3::new(-0.1, 0.375, 0.0), true),
        (10, 8, Vec3::new(0.1, 0.785, 0.0), false),
        (8, 9, Vec3::new(0.1, 0.375, 0.0), true),
    ];
    for (a, b, point, is_hinge) in joints {
        let (anchor1, anchor2) = (point - parts[a].1, point - parts[b].1);
        let (e1, e2) = (bodies[a], bodies[b]);
        if is_hinge {
            spawn(
                app,
                RevoluteJoint::new(e1, e2)
                    .with_hinge_axis(Vec3::X)
                    .with_local_anchor1(anchor1)
                    .with_local_anchor2(anchor2),
            );
        } else {
            spawn(
                app,
                SphericalJoint::new(e1, e2)
                    .with_local_anchor1(anchor1)
                    .with_local_anchor2(anchor2),
            );
        }
    }
    bodies
}

/// The fastest part of `bodies`, m/s.
fn fastest(app: &App, bodies: &[Entity]) -> f32 {
    bodies.iter().map(|&b| speed(app, b)).fold(0.0, f32::max)
}

/// At rest means still: the bar of `resting.rs`, 1 mm/s, far below any real motion after 10 s.
const AT_REST: f32 = 1e-3;

/// A ragdoll lying on its back on the ground.
fn lying_ragdoll(app: &mut App) -> Vec<Entity> {
    ground(app);
    let turn = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    ragdoll(app, Vec3::Y * 0.125, turn)
}

#[test]
fn a_ragdoll_lying_on_its_back_comes_to_rest() {
    let mut app = app();
    let bodies = lying_ragdoll(&mut app);
    for &body in &bodies {
        app.world_mut().entity_mut(body).insert(SleepingDisabled);
    }
    step(&mut app, 600);
    let v = fastest(&app, &bodies);
    assert!(v < AT_REST, "fastest part after 10 s: {v} m/s");
}

#[test]
fn a_ragdoll_lying_on_its_back_falls_asleep() {
    let mut app = app();
    let bodies = lying_ragdoll(&mut app);
    // Settling from the drop takes about a second; then the default threshold's 0.5 s.
    step(&mut app, 180);
    let asleep = bodies
        .iter()
        .filter(|&&b| app.world().get::<Sleeping>(b).is_some())
        .count();
    assert_eq!(asleep, bodies.len(), "parts asleep after 3 s");
}

#[test]
fn two_capsules_joined_end_to_end_lying_come_to_rest() {
    let mut app = app();
    ground(&mut app);
    let along_x = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let mut capsule = |radius: f32, x: f32| {
        let transform = Transform::from_xyz(x, 0.1, 0.0).with_rotation(along_x);
        let collider = Collider::capsule(radius, 0.2);
        spawn(
            &mut app,
            (RigidBody::Dynamic, collider, transform, SleepingDisabled),
        )
    };
    let (a, b) = (capsule(0.055, 0.0), capsule(0.05, 0.34));
    let joint = SphericalJoint::new(a, b)
        .with_local_anchor1(Vec3::new(0.0, -0.17, 0.0))
        .with_local_anchor2(Vec3::new(0.0, 0.17, 0.0));
    spawn(&mut app, joint);
    step(&mut app, 600);
    let v = fastest(&app, &[a, b]);
    assert!(v < AT_REST, "fastest capsule after 10 s: {v} m/s");
}

/// A ball of `radius` resting on frictionless ground, pushed by the constant force `push`, and
/// a static anchor body at its centre: `(ball, anchor)`.
fn pushed_ball(app: &mut App, radius: f32, push: Vec3) -> (Entity, Entity) {
    let ground = ground(app);
    app.world_mut()
        .entity_mut(ground)
        .insert(Friction::new(0.0));
    let ball = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(radius),
            Friction::new(0.0),
            Transform::from_xyz(0.0, radius, 0.0),
            ConstantForce(push),
            SleepingDisabled,
        ),
    );
    let anchor = spawn(
        app,
        (RigidBody::Static, Transform::from_xyz(0.0, radius, 0.0)),
    );
    (ball, anchor)
}

/// A ball on frictionless ground, pushed sideways by a constant force and held by a prismatic
/// joint that lets it move only vertically: the contact carries the weight, the joint exactly
/// the push, and the joint reports it (the joint's velocity blocks carry most of it).
#[test]
fn a_joint_on_a_resting_body_reports_the_load_it_holds() {
    let mut app = app();
    let push = Vec3::new(20.0, 0.0, 0.0);
    let (ball, anchor) = pushed_ball(&mut app, 0.5, push);
    let joint = spawn(
        &mut app,
        PrismaticJoint::new(anchor, ball).with_slider_axis(Vec3::Y),
    );
    step(&mut app, 120);
    let force = joint_state::<PrismaticJoint>(&app, joint).force();
    // Statics: the joint pulls the ball back with exactly the push and carries none of the
    // weight. The solver converges to the f32 rounding of the impulses, far inside 1 % of the
    // push.
    let error = (force + push).length();
    assert!(
        error <= 0.01 * push.length(),
        "joint force {force} against a push of {push}"
    );
}

/// A lighter ball held the same way by a compliant joint: the joint gives way by compliance ×
/// load, as it does away from contacts (velocity blocks would hold it rigid, so it has none).
#[test]
fn a_compliant_joint_on_a_resting_body_stretches_under_its_load() {
    let mut app = app();
    let push = Vec3::new(20.0, 0.0, 0.0);
    let (ball, anchor) = pushed_ball(&mut app, 0.1, push);
    let compliance = 1e-3;
    spawn(
        &mut app,
        PrismaticJoint::new(anchor, ball)
            .with_slider_axis(Vec3::Y)
            .with_compliance(compliance),
    );
    // Undamped, the ball rings about the stretched pose, x = c F (1 − cos ωt) with
    // ω = 1 / √(c m) ≈ 15 rad/s; its mean over 10 s is c F within c F / (ω · 10 s) ≈ 0.7 %.
    let steps = 600;
    let mut sum = 0.0;
    for _ in 0..steps {
        step(&mut app, 1);
        sum += position(&app, ball).x;
    }
    let stretch = sum / steps as f32;
    let expected = compliance * push.x;
    assert!(
        (stretch - expected).abs() <= 0.01 * expected,
        "stretched {stretch} m on average, statics say {expected} m"
    );
}

/// The largest gap between the anchors of any joint of type `J`, m.
fn widest_gap<J: Joint + Clone>(app: &mut App) -> f32 {
    let mut joints = app.world_mut().query_filtered::<Entity, With<J>>();
    let joints: Vec<Entity> = joints.iter(app.world()).collect();
    joints
        .into_iter()
        .map(|joint| anchor_error::<J>(app, joint))
        .fold(0.0, f32::max)
}

/// The largest gap between the anchors of any spherical or revolute joint, m.
fn widest_joint_gap(app: &mut App) -> f32 {
    widest_gap::<RevoluteJoint>(app).max(widest_gap::<SphericalJoint>(app))
}

/// A ragdoll dropped on its back: once it lies on the ground (its joints then held in the
/// contact solve and taking one position pass per substep), every joint stays closed.
#[test]
fn a_ragdoll_on_the_ground_keeps_its_joints_closed() {
    let mut app = app();
    ground(&mut app);
    let turn = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    ragdoll(&mut app, Vec3::Y * 0.6, turn);
    step(&mut app, 60);
    let mut widest: f32 = 0.0;
    for _ in 0..120 {
        step(&mut app, 1);
        widest = widest.max(widest_joint_gap(&mut app));
    }
    // Closed: the drift one substep's position update leaves (h² ω² r, micrometres for a
    // part turning at a few rad/s) corrected every substep, far below any visible gap.
    assert!(widest <= 1e-4, "joint gap up to {widest} m on the ground");
}
