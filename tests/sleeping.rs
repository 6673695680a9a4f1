//! Sleeping: bodies at rest fall asleep after `time_to_sleep`, and wake when disturbed.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

fn resting_box(app: &mut App) -> Entity {
    ground(app);
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.55, 0.0),
        ),
    )
}

/// Steps until `e` sleeps, at most `max` steps; returns the steps taken.
fn steps_until_asleep(app: &mut App, e: Entity, max: usize) -> Option<usize> {
    (1..=max).find(|_| {
        app.update();
        is_sleeping(app, e)
    })
}

#[test]
fn resting_body_falls_asleep() {
    let mut app = app();
    let body = resting_box(&mut app);
    let threshold = SleepThreshold::default();
    // Within a few seconds: 3 s = 192 steps.
    let asleep_after =
        steps_until_asleep(&mut app, body, 192).expect("box did not sleep within 3 s");
    // Not before it has been slow for time_to_sleep (0.5 s = 32 steps).
    assert!(
        asleep_after as f32 * DT >= threshold.time_to_sleep,
        "slept after {asleep_after} steps, before time_to_sleep"
    );
    // Sleep zeroes the velocities, and a sleeping body stays exactly where it is.
    assert_eq!(velocity(&app, body), Vec3::ZERO);
    assert_eq!(angular_velocity(&app, body), Vec3::ZERO);
    let p = position(&app, body);
    assert!((p.y - 0.5).abs() <= slop(), "fell asleep at height {}", p.y);
    // Nothing touches it, so it stays asleep, exactly where it is.
    for k in 1..=64 {
        app.update();
        assert!(
            is_sleeping(&app, body),
            "woke up again {k} steps after falling asleep, untouched"
        );
    }
    assert_eq!(position(&app, body), p);
}

#[test]
fn falling_body_does_not_sleep() {
    let mut app = app();
    let body = spawn(&mut app, (RigidBody::Dynamic, Collider::sphere(0.5)));
    for k in 0..64 {
        app.update();
        assert!(
            !is_sleeping(&app, body),
            "fell asleep in free fall at step {k}"
        );
    }
}

#[test]
fn sleeping_disabled_never_sleeps() {
    let mut app = app();
    let body = resting_box(&mut app);
    set(&mut app, body, SleepingDisabled);
    for k in 0..192 {
        app.update();
        assert!(
            !is_sleeping(&app, body),
            "slept at step {k} despite SleepingDisabled"
        );
    }
}

/// A body's rest while sleeping was disabled does not count: once allowed again, it sleeps only
/// after a whole `time_to_sleep` at rest. (With every dynamic body disabled the sleeping stage
/// builds no islands; it must still restart the timers.)
#[test]
fn rest_while_sleeping_is_disabled_does_not_count() {
    let mut app = app();
    let body = resting_box(&mut app);
    let time_to_sleep = SleepThreshold::default().time_to_sleep;
    let steps_to_sleep = (time_to_sleep / DT).ceil() as usize;
    // At rest for most of `time_to_sleep`, then disabled for as long, then allowed again.
    for _ in 0..steps_to_sleep - 4 {
        app.update();
    }
    assert!(!is_sleeping(&app, body), "slept before time_to_sleep");
    set(&mut app, body, SleepingDisabled);
    for _ in 0..steps_to_sleep {
        app.update();
    }
    app.world_mut()
        .entity_mut(body)
        .remove::<SleepingDisabled>();
    let asleep_after =
        steps_until_asleep(&mut app, body, 4 * steps_to_sleep).expect("never slept again");
    assert!(
        asleep_after >= steps_to_sleep,
        "slept {asleep_after} steps after sleeping was allowed again, before time_to_sleep \
         ({steps_to_sleep} steps)"
    );
}

#[test]
fn sleeping_body_wakes_when_hit() {
    let mut app = app();
    let body = resting_box(&mut app);
    steps_until_asleep(&mut app, body, 192).expect("box did not sleep within 3 s");
    // Drop a ball onto it from 2 m above its top face: it arrives after sqrt(2·2/g) = 0.64 s.
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            Transform::from_xyz(0.2, 3.25, 0.1),
        ),
    );
    let mut woke = None;
    for k in 0..64 {
        app.update();
        if !is_sleeping(&app, body) {
            woke = Some(k);
            break;
        }
        // Until it wakes, the sleeping box still stops the ball like a static body: at most
        // linear_slop of penetration.
        let gap = position(&app, ball).y - 0.25 - 1.0;
        assert!(gap >= -slop(), "ball sank {} m into the sleeping box", -gap);
    }
    let k = woke.expect("box still asleep 1 s after the ball was dropped on it");
    let gap = position(&app, ball).y - 0.25 - 1.0;
    // Woken by the touch, not before: the ball's bottom is within the speculative margin plus
    // one step of travel at impact speed (sqrt(2 g 2) = 6.3 m/s) of the box's top face.
    assert!(
        gap <= SolverConfig::default().speculative_distance() + 6.3 * DT,
        "box woke at step {k} while the ball was still {gap} m above it (nothing touched it)"
    );
    // And the pile settles and sleeps again.
    let both_asleep = (0..192).any(|_| {
        app.update();
        is_sleeping(&app, body) && is_sleeping(&app, ball)
    });
    assert!(
        both_asleep,
        "box and ball did not fall asleep again within 3 s"
    );
}

#[test]
fn sleeping_body_wakes_when_its_velocity_is_set() {
    let mut app = app();
    let body = resting_box(&mut app);
    steps_until_asleep(&mut app, body, 192).expect("box did not sleep within 3 s");
    set(&mut app, body, LinearVelocity(Vec3::new(0.0, 3.0, 0.0)));
    app.update();
    assert!(
        !is_sleeping(&app, body),
        "setting the velocity did not wake the body"
    );
    // And it actually moved up this step (3 m/s × 1/64 s minus gravity's share).
    assert!(
        position(&app, body).y > 0.5 + 0.04,
        "did not move: y = {}",
        position(&app, body).y
    );
}

#[test]
fn sleeping_body_wakes_when_support_is_removed() {
    // A box sleeping on another box falls when the lower one is despawned.
    let mut app = app();
    ground(&mut app);
    let lower = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    let upper = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 1.5, 0.0),
        ),
    );
    steps_until_asleep(&mut app, upper, 192).expect("stack did not sleep within 3 s");
    assert!(is_sleeping(&app, lower));
    app.world_mut().despawn(lower);
    step(&mut app, 32);
    assert!(
        !is_sleeping(&app, upper),
        "upper box kept sleeping in mid-air"
    );
    // After falling for a while it lands on the ground: 1 m drop, done in 0.45 s.
    assert!(
        position(&app, upper).y < 0.5 + slop(),
        "upper box still at {}",
        position(&app, upper).y
    );
}

/// A heavy ball fired into a stack of three cubes that has fallen asleep hands its momentum on,
/// as it does into an awake stack: the sleeper it is about to hit wakes before the step that
/// solves the impact. Over the first six steps (the impact is in the fourth) only the ground's
/// friction on the bottom cube can take horizontal momentum away, at most `μ m g t`.
#[test]
fn a_body_hitting_a_sleeping_stack_hands_on_its_momentum() {
    let mut app = app();
    ground(&mut app);
    let cubes = cube_column(&mut app, 3, ());
    step(&mut app, 120);
    assert!(
        cubes
            .iter()
            .all(|&c| app.world().get::<Sleeping>(c).is_some())
    );
    let speed = 35.0;
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.4),
            ColliderDensity(3000.0),
            Transform::from_xyz(-3.0, 0.5, 0.0),
            LinearVelocity(Vec3::X * speed),
            GravityScale(0.0),
        ),
    );
    let ball_mass = 3000.0 * 4.0 / 3.0 * std::f32::consts::PI * 0.4f32.powi(3);
    let steps = 6;
    step(&mut app, steps);
    let momentum: f32 = std::iter::once(ball)
        .chain(cubes.iter().copied())
        .map(|e| {
            let mass = if e == ball { ball_mass } else { 1000.0 };
            mass * velocity(&app, e).x
        })
        .sum();
    let initial = ball_mass * speed;
    let friction = 0.5 * 3000.0 * 9.81 * steps as f32 * DT;
    assert!(
        velocity(&app, ball).x < speed * 0.9,
        "the ball has not hit yet"
    );
    assert!(
        momentum > initial - friction - 0.01 * initial && momentum < initial * 1.01,
        "momentum {momentum}, started with {initial} (friction may take {friction})"
    );
}
