//! Jointed bodies lying on the ground come to rest.
//!
//! Both tests fail today and are ignored (run them with `--ignored`): a body held partly by a
//! contact and partly by a joint creeps at millimetres per second and never settles (two
//! capsules of radii 5.5 and 5 cm joined end to end crawl along the ground at 7-15 mm/s; of
//! equal radii they rest at 0.001 mm/s). Box3D and rapier3d bring the same ragdoll to rest
//! (0.0-0.2 mm/s). With sleeping on, the ragdoll's parts turn at 0.1-0.25 rad/s, above the
//! default threshold, and it does not fall asleep. The crawl is proportional to the substep
//! (4, 8, 16 substeps: 14, 7, 3.7 mm/s for the capsules), an O(h) splitting error. The lead:
//! friction is solved in the contact solve, the joints' position corrections come after it in
//! each substep, and the velocity projected from those corrections slips the contact points
//! tangentially where friction never sees it.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

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
            spawn(
                app,
                (RigidBody::Dynamic, collider, transform, SleepingDisabled),
            )
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
                    .with_aligned_axis(Vec3::X)
                    .with_local_anchor_1(anchor1)
                    .with_local_anchor_2(anchor2),
            );
        } else {
            spawn(
                app,
                SphericalJoint::new(e1, e2)
                    .with_local_anchor_1(anchor1)
                    .with_local_anchor_2(anchor2),
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

#[test]
#[ignore = "known creep of bodies held by a contact and a joint (see the module docs)"]
fn a_ragdoll_lying_on_its_back_comes_to_rest() {
    let mut app = app();
    ground(&mut app);
    let turn = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    let bodies = ragdoll(&mut app, Vec3::Y * 0.125, turn);
    step(&mut app, 600);
    let v = fastest(&app, &bodies);
    assert!(v < AT_REST, "fastest part after 10 s: {v} m/s");
}

#[test]
#[ignore = "known creep of bodies held by a contact and a joint (see the module docs)"]
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
        .with_local_anchor_1(Vec3::new(0.0, -0.17, 0.0))
        .with_local_anchor_2(Vec3::new(0.0, 0.17, 0.0));
    spawn(&mut app, joint);
    step(&mut app, 600);
    let v = fastest(&app, &[a, b]);
    assert!(v < AT_REST, "fastest capsule after 10 s: {v} m/s");
}
