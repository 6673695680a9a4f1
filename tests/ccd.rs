//! Fast bodies do not tunnel: a 50 m/s projectile moves 0.78 m per step, more than the 0.5 m
//! wall plus its own size, so only speculative contacts (or CCD) can stop it.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

const SPEED: f32 = 50.0;
const WALL_HALF: f32 = 0.25;
const RADIUS: f32 = 0.1;

/// A static wall 0.5 m thick (x in [-0.25, 0.25]) and a projectile shot at it along
/// `direction` from `start`. Returns the app, the projectile and the wall.
fn shoot(collider: Collider, start: Vec3, direction: Vec3) -> (App, Entity) {
    let mut app = app();
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(2.0 * WALL_HALF, 10.0, 10.0),
            Transform::default(),
        ),
    );
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            collider,
            Transform::from_translation(start),
            LinearVelocity(direction.normalize() * SPEED),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    );
    (app, body)
}

/// Runs 1 s and checks the projectile's centre never got past `limit` (the near-side contact
/// position plus the contact tolerance).
fn never_passes(app: &mut App, body: Entity, limit: f32, what: &str) {
    for k in 0..64 {
        app.update();
        let x = position(app, body).x;
        assert!(x.is_finite(), "{what}: non-finite position at step {k}");
        assert!(
            x <= limit,
            "{what}: centre reached x = {x} at step {k} (limit {limit})"
        );
    }
    // It ends on the near side, stopped by the wall (restitution 0): no longer moving in +x.
    let v = velocity(app, body).x;
    assert!(v <= 1e-3, "{what}: still moving into the wall at {v} m/s");
}

#[test]
fn fast_sphere_does_not_tunnel_head_on() {
    // Several start offsets within one step's travel (0.78 m), so every phase of the step at
    // which the sphere reaches the wall is covered.
    for i in 0..8 {
        let offset = i as f32 * SPEED * DT / 8.0;
        let start = Vec3::new(-5.0 - offset, 0.0, 0.0);
        let (mut app, ball) = shoot(Collider::sphere(RADIUS), start, Vec3::X);
        // Touching the near face puts the centre at -0.25 - 0.1; the solver may leave
        // linear_slop of penetration.
        never_passes(
            &mut app,
            ball,
            -WALL_HALF - RADIUS + slop(),
            &format!("offset {offset}"),
        );
    }
}

#[test]
fn fast_sphere_does_not_tunnel_at_an_angle() {
    for i in 0..4 {
        let offset = i as f32 * SPEED * DT / 4.0;
        let start = Vec3::new(-5.0 - offset, -3.0, 0.0);
        let (mut app, ball) = shoot(Collider::sphere(RADIUS), start, Vec3::new(1.0, 0.6, 0.0));
        never_passes(
            &mut app,
            ball,
            -WALL_HALF - RADIUS + slop(),
            &format!("offset {offset}"),
        );
    }
}

#[test]
fn fast_small_box_does_not_tunnel() {
    for i in 0..4 {
        let offset = i as f32 * SPEED * DT / 4.0;
        let start = Vec3::new(-5.0 - offset, 0.0, 0.0);
        let (mut app, bullet) = shoot(Collider::cuboid(0.2, 0.2, 0.2), start, Vec3::X);
        never_passes(
            &mut app,
            bullet,
            -WALL_HALF - 0.1 + slop(),
            &format!("offset {offset}"),
        );
    }
}

#[test]
fn fast_sphere_falling_onto_thin_ground_stops_on_top() {
    // Straight down at 50 m/s onto a 0.5 m thick floor (with gravity).
    let mut app = app();
    spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(10.0, 0.5, 10.0),
            Transform::from_xyz(0.0, -0.25, 0.0),
        ),
    );
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(RADIUS),
            Transform::from_xyz(0.0, 3.0, 0.0),
            LinearVelocity(Vec3::new(0.0, -SPEED, 0.0)),
            SleepingDisabled,
        ),
    );
    for k in 0..64 {
        app.update();
        let y = position(&app, ball).y;
        // Resting on top puts the centre at y = 0.1; allow linear_slop of penetration.
        assert!(
            y >= RADIUS - slop(),
            "step {k}: centre at y = {y}, below the floor's top"
        );
    }
    assert!(
        speed(&app, ball) < 1e-3,
        "still moving at {} m/s",
        speed(&app, ball)
    );
}
