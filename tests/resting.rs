//! Bodies dropped onto the ground come to rest on its surface.
//!
//! Sleeping is disabled on the bodies so the solver itself must bring them to rest (sleeping
//! would zero the velocities by fiat).

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// Drops `collider` with its lowest point `drop` above the ground (`rest_y` is the body's
/// height when resting), runs 2 s, and checks speed and penetration.
fn settles(collider: Collider, rest_y: f32, rotation: Quat, drop: f32) {
    let mut app = app();
    ground(&mut app);
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            collider,
            Transform::from_xyz(0.3, rest_y + drop, -0.2).with_rotation(rotation),
            SleepingDisabled,
        ),
    );
    step(&mut app, 128);
    let v = speed(&app, body);
    let w = angular_velocity(&app, body).length();
    // At rest means still: the bar is 1 mm/s (and 1 mrad/s), far below any motion a real
    // bounce or slide would leave after 2 s.
    assert!(v < 1e-3, "speed after 2 s: {v} m/s");
    assert!(w < 1e-3, "angular speed after 2 s: {w} rad/s");
    let y = position(&app, body).y;
    // The solver may leave up to linear_slop of penetration (its contact tolerance); a body
    // resting on the surface must not float above it by more than that either.
    let penetration = rest_y - y;
    assert!(
        penetration.abs() <= slop(),
        "rest height {y}, expected {rest_y} (penetration {penetration}, slop {})",
        slop()
    );
    // Nothing pushes sideways: the body lands where it was dropped (within the tolerance).
    let p = position(&app, body);
    assert!(
        Vec2::new(p.x - 0.3, p.z + 0.2).length() <= slop(),
        "drifted to {p}"
    );
}

#[test]
fn sphere_comes_to_rest_on_ground() {
    settles(Collider::sphere(0.5), 0.5, Quat::IDENTITY, 0.25);
}

#[test]
fn box_comes_to_rest_on_ground() {
    settles(Collider::cuboid(1.0, 1.0, 1.0), 0.5, Quat::IDENTITY, 0.25);
}

#[test]
fn flat_wide_box_comes_to_rest_on_ground() {
    // A box turned 90° about y: still flat, different contact-point layout.
    settles(
        Collider::cuboid(2.0, 0.4, 1.0),
        0.2,
        Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
        0.1,
    );
}

#[test]
fn box_spawned_touching_stays_put() {
    // Spawned exactly on the surface: nothing should move at all beyond the tolerance.
    settles(Collider::cuboid(1.0, 1.0, 1.0), 0.5, Quat::IDENTITY, 0.0);
}

#[test]
fn resting_contact_carries_the_weight() {
    // Newton's third law at rest: the normal impulse per step equals m g dt.
    let mut app = app();
    let floor = ground(&mut app);
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
            SleepingDisabled,
        ),
    );
    step(&mut app, 128);
    let m = computed_mass(&app, body).mass();
    let mut state = bevy::ecs::system::SystemState::<Collisions>::new(app.world_mut());
    let collisions = state.get(app.world()).unwrap();
    let pair = collisions
        .get(floor, body)
        .expect("box and ground are a contact pair");
    assert!(pair.is_touching());
    let impulse = pair.total_normal_impulse();
    let weight_impulse = m * g() * DT;
    // Momentum balance over the last step: J - m g dt = m Δv, and a body at rest (speed
    // < 1 mm/s, checked in the tests above) changes velocity by < 2 mm/s in a step.
    let v = speed(&app, body);
    assert!(v < 1e-3, "not at rest: {v} m/s");
    assert!(
        (impulse - weight_impulse).abs() <= m * 2e-3,
        "normal impulse {impulse} N·s, weight × dt {weight_impulse} N·s"
    );
}
