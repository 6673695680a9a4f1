//! Breakable joints: a joint holding a hanging mass m breaks when its break force is below the
//! load m g, and holds when it is above.
//!
//! The load is exact here: the mass hangs at rest straight below its joint, so every substep
//! gravity moves it by g h² and the joint pulls it back with λ = m g h², a force λ / h² = m g
//! (the anchor lever is parallel to the pull, so no rotation enters the generalized mass).
//! Break forces 5 % either side of m g are therefore far outside any round-off.

use crate::common;
use crate::joints_common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

const M: f32 = 10.0;

/// A 10 kg ball hanging 1 m below a static anchor at the origin, joined at the anchor point by
/// the joint `make` builds (local anchors: origin on the anchor, (0, 1, 0) on the ball).
fn hanging<J: Joint>(app: &mut App, make: impl FnOnce(Entity, Entity) -> J) -> (Entity, Entity) {
    let anchor = spawn(app, (RigidBody::Static, Transform::default()));
    let ball = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.2),
            Mass(M),
            Transform::from_xyz(0.0, -1.0, 0.0),
            SleepingDisabled,
        ),
    );
    let joint = spawn(
        app,
        make(anchor, ball).with_local_anchor2(Vec3::new(0.0, 1.0, 0.0)),
    );
    (ball, joint)
}

fn holds<J: Joint + Clone>(make: impl FnOnce(Entity, Entity) -> J, label: &str) {
    let mut app = app();
    let weight = M * g();
    let (ball, joint) = hanging(&mut app, |a, b| make(a, b).with_break_force(1.05 * weight));
    let mut cursor = message_cursor::<JointBroken>(&app);
    for k in 1..=128 {
        step(&mut app, 1);
        let broken = read_messages(&app, &mut cursor);
        assert!(broken.is_empty(), "{label}: broke at step {k}: {broken:?}");
    }
    let j: J = joints_common::joint_state(&app, joint);
    assert!(!j.is_broken(), "{label}: marked broken");
    assert!(app.world().get::<ConstraintDisabled>(joint).is_none());
    // Still holding the ball where it hung (a rigid joint at rest: round-off only).
    let p = position(&app, ball);
    assert!(
        (p - Vec3::new(0.0, -1.0, 0.0)).length() <= 1e-4,
        "{label}: ball at {p}"
    );
    // And reporting the load it carries: m g upwards on the ball. λ/h² is exact but C = g h²
    // = 1.5e-4 m is the difference of coordinates ≈ 1 m, each rounded by ½ ulp = 6e-8 m: a
    // relative error up to 8e-4; allow 2e-3.
    let force = j.force();
    println!("{label}: holds at break force 1.05 m g, carrying {force:.4} N (m g = {weight:.4} N)");
    assert!(
        (force - Vec3::new(0.0, weight, 0.0)).length() <= 2e-3 * weight,
        "{label}: force {force}, weight {weight}"
    );
}

fn breaks<J: Joint + Clone>(make: impl FnOnce(Entity, Entity) -> J, label: &str) {
    let mut app = app();
    let weight = M * g();
    let (ball, joint) = hanging(&mut app, |a, b| make(a, b).with_break_force(0.95 * weight));
    let mut cursor = message_cursor::<JointBroken>(&app);
    step(&mut app, 1);
    let broken = read_messages(&app, &mut cursor);
    println!("{label}: break force 0.95 m g, messages after one step: {broken:?}");
    assert_eq!(
        broken.len(),
        1,
        "{label}: expected one JointBroken, got {broken:?}"
    );
    assert_eq!(
        broken[0].joint, joint,
        "{label}: the message names another entity"
    );
    assert!(
        broken[0].force.length() > 0.95 * weight,
        "{label}: reported breaking force {} below the break force",
        broken[0].force
    );
    assert!(
        app.world().get::<ConstraintDisabled>(joint).is_some(),
        "{label}: the broken joint has no ConstraintDisabled"
    );
    assert!(joints_common::joint_state::<J>(&app, joint).is_broken());
    let y_break = position(&app, ball).y;
    let v_break = velocity(&app, ball);
    // From then on it falls freely, and no further message is sent.
    step(&mut app, 64);
    assert!(
        read_messages(&app, &mut cursor).is_empty(),
        "{label}: sent twice"
    );
    let dv = velocity(&app, ball) - v_break;
    let fell = y_break - position(&app, ball).y;
    // Free fall for 1 s: Δv = −g t exactly (semi-implicit Euler), up to round-off of 256
    // substep updates of a speed ≤ 10 m/s (½ ulp(8) = 4.8e-7 each): 1.2e-4 m/s; allow 2e-4.
    assert!(
        (dv - Vec3::new(0.0, -g(), 0.0)).length() <= 2e-4,
        "{label}: Δv = {dv} in the second after breaking, free fall gives −{}",
        g()
    );
    assert!(fell > 4.0, "{label}: fell only {fell} m in 1 s");
}

#[test]
fn spherical_joint_holds_below_its_break_force() {
    holds(SphericalJoint::new, "spherical");
}

#[test]
fn spherical_joint_breaks_above_its_break_force() {
    breaks(SphericalJoint::new, "spherical");
}

#[test]
fn fixed_joint_holds_below_its_break_force() {
    holds(FixedJoint::new, "fixed");
}

#[test]
fn fixed_joint_breaks_above_its_break_force() {
    breaks(FixedJoint::new, "fixed");
}

#[test]
fn distance_joint_breaks_above_its_break_force() {
    breaks(
        |a, b| DistanceJoint::new(a, b).with_rest_length(0.0),
        "distance",
    );
}

#[test]
fn revolute_joint_holds_below_its_break_force() {
    holds(RevoluteJoint::new, "revolute");
}

#[test]
fn revolute_joint_breaks_above_its_break_force() {
    breaks(RevoluteJoint::new, "revolute");
}

// The slider's axis is X, across the load: the joint carries the whole weight.
#[test]
fn prismatic_joint_holds_below_its_break_force() {
    holds(PrismaticJoint::new, "prismatic");
}

#[test]
fn prismatic_joint_breaks_above_its_break_force() {
    breaks(PrismaticJoint::new, "prismatic");
}
