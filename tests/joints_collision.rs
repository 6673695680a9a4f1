//! Bodies joined by a joint do not collide with each other by default; `with_collision(true)`
//! lets them.

use crate::common;
use crate::joints_common;

use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

/// Two unit cubes overlapping by 0.4 m along X (centres 0.6 m apart), gravity off, joined by
/// the joint `make` builds; every joint is built so that it is satisfied in this pose. Returns
/// the app and both cubes.
fn overlapping<J: Joint>(make: impl FnOnce(Entity, Entity) -> J) -> (App, Entity, Entity) {
    let mut app = app();
    no_gravity(&mut app);
    let a = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.0, 0.0),
            SleepingDisabled,
        ),
    );
    let b = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.6, 0.0, 0.0),
            SleepingDisabled,
        ),
    );
    spawn(&mut app, make(a, b));
    (app, a, b)
}

fn touching(app: &mut App, a: Entity, b: Entity) -> bool {
    let mut state = SystemState::<Collisions>::new(app.world_mut());
    let collisions = state.get(app.world()).unwrap();
    collisions.get(a, b).is_some_and(|pair| pair.is_touching())
}

/// Each kind of joint, satisfied with the cubes 0.6 m apart along X.
fn check_all_kinds(check: impl Fn(&str, (App, Entity, Entity))) {
    let half = Vec3::new(0.3, 0.0, 0.0);
    check(
        "fixed",
        overlapping(|a, b| {
            FixedJoint::new(a, b)
                .with_local_anchor1(half)
                .with_local_anchor2(-half)
        }),
    );
    check(
        "spherical",
        overlapping(|a, b| {
            SphericalJoint::new(a, b)
                .with_local_anchor1(half)
                .with_local_anchor2(-half)
        }),
    );
    check(
        "revolute",
        overlapping(|a, b| {
            RevoluteJoint::new(a, b)
                .with_local_anchor1(half)
                .with_local_anchor2(-half)
        }),
    );
    check(
        "prismatic",
        overlapping(|a, b| PrismaticJoint::new(a, b).with_slider_axis(Vec3::X)),
    );
    check(
        "distance",
        overlapping(|a, b| DistanceJoint::new(a, b).with_limits(0.0, 3.0)),
    );
}

#[test]
fn joined_bodies_do_not_collide_by_default() {
    check_all_kinds(|label, (mut app, a, b)| {
        let (pa, pb) = (Vec3::ZERO, Vec3::new(0.6, 0.0, 0.0));
        for k in 1..=32 {
            step(&mut app, 1);
            assert!(
                !touching(&mut app, a, b),
                "{label}: joined cubes have a touching contact at step {k}"
            );
        }
        // Nothing acts on them: the joint is satisfied and there is no contact, so they stay
        // exactly where they were.
        assert_eq!(position(&app, a), pa, "{label}: cube a moved");
        assert_eq!(position(&app, b), pb, "{label}: cube b moved");
    });
}

#[test]
fn with_collision_lets_joined_bodies_collide() {
    // A rope (distance limits 0..3 m) leaves them free to separate, so the contact pushes them
    // out of each other.
    let (mut app, a, b) = overlapping(|a, b| {
        DistanceJoint::new(a, b)
            .with_limits(0.0, 3.0)
            .with_collision(true)
    });
    step(&mut app, 1);
    assert!(
        touching(&mut app, a, b),
        "no contact between cubes joined with_collision(true)"
    );
    // Pushed apart at up to 3 m/s (the push-out cap): 0.4 m of overlap is gone well within 1 s.
    step(&mut app, 63);
    let gap = position(&app, b).x - position(&app, a).x;
    println!("with_collision(true): centres {gap:.4} m apart after 1 s (touching at 1 m)");
    assert!(
        gap >= 1.0 - slop(),
        "still overlapping: centres {gap} m apart"
    );
}

#[test]
fn with_collision_false_is_the_default() {
    // The builder with `false` behaves exactly like the default.
    let (mut app, a, b) = overlapping(|a, b| {
        DistanceJoint::new(a, b)
            .with_limits(0.0, 3.0)
            .with_collision(false)
    });
    step(&mut app, 16);
    assert!(!touching(&mut app, a, b));
    assert_eq!(position(&app, b), Vec3::new(0.6, 0.0, 0.0));
}

#[test]
fn the_exclusion_follows_joints_added_and_removed_mid_run() {
    // The overlapping cubes joined by a rope: no contact. Despawned, the rope stops excluding
    // them, and they collide; a new rope between them excludes them again.
    let (mut app, a, b) = overlapping(|a, b| DistanceJoint::new(a, b).with_limits(0.0, 3.0));
    step(&mut app, 4);
    assert!(!touching(&mut app, a, b), "joined cubes touch");
    let rope = app
        .world_mut()
        .query_filtered::<Entity, With<DistanceJoint>>()
        .single(app.world())
        .unwrap();
    app.world_mut().despawn(rope);
    step(&mut app, 1);
    assert!(
        touching(&mut app, a, b),
        "no contact once the joint is gone"
    );
    // Put them back into each other and join them again.
    set(&mut app, b, Position(Vec3::new(0.6, 0.0, 0.0)));
    set(&mut app, a, Position(Vec3::ZERO));
    spawn(&mut app, DistanceJoint::new(a, b).with_limits(0.0, 3.0));
    step(&mut app, 1);
    assert!(!touching(&mut app, a, b), "touching again with a new joint");
}
