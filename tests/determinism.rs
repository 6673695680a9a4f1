//! Determinism: the same world stepped the same way gives bit-identical results.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// A pile of 20 cubes and spheres dropped with some rotation and spin onto the ground, in a
/// small area so they collide with each other.
fn pile() -> (App, Vec<Entity>) {
    let mut app = app();
    ground(&mut app);
    let bodies = (0..20)
        .map(|i| {
            let f = i as f32;
            let position = Vec3::new(
                (f * 0.37).sin() * 1.2,
                1.0 + f * 0.8,
                (f * 0.73).cos() * 1.2,
            );
            let rotation = Quat::from_euler(EulerRot::XYZ, f * 0.3, f * 0.7, f * 0.11);
            let collider = if i % 2 == 0 {
                Collider::cuboid(0.8, 0.6, 1.0)
            } else {
                Collider::sphere(0.4)
            };
            spawn(
                &mut app,
                (
                    RigidBody::Dynamic,
                    collider,
                    Transform::from_translation(position).with_rotation(rotation),
                    AngularVelocity(Vec3::new(f * 0.1, -0.5, 0.2)),
                ),
            )
        })
        .collect();
    (app, bodies)
}

type State = ([u32; 3], [u32; 4], [u32; 3], [u32; 3]);

fn state(app: &App, bodies: &[Entity]) -> Vec<State> {
    bodies
        .iter()
        .map(|&e| {
            (
                position(app, e).to_array().map(f32::to_bits),
                rotation(app, e).to_array().map(f32::to_bits),
                velocity(app, e).to_array().map(f32::to_bits),
                angular_velocity(app, e).to_array().map(f32::to_bits),
            )
        })
        .collect()
}

#[test]
fn identical_worlds_step_bit_identically() {
    let (mut a, bodies_a) = pile();
    let (mut b, bodies_b) = pile();
    let mut touching = bevy::ecs::system::SystemState::<Collisions>::new(a.world_mut());
    let mut most_between_bodies = 0;
    for k in 0..300 {
        a.update();
        b.update();
        let collisions = touching.get(a.world()).unwrap();
        let between_bodies = collisions
            .iter()
            .filter(|p| bodies_a.contains(&p.collider1) && bodies_a.contains(&p.collider2))
            .count();
        most_between_bodies = most_between_bodies.max(between_bodies);
        // Exact equality: determinism is a bitwise property, there is no tolerance.
        assert_eq!(
            state(&a, &bodies_a),
            state(&b, &bodies_b),
            "diverged at step {k}"
        );
    }
    // The scene did something: the bodies fell and piled up (a frozen scene is trivially
    // deterministic). The highest spawn is at 16.2 m; everything is down on the pile.
    let top = bodies_a
        .iter()
        .map(|&e| position(&a, e).y)
        .fold(f32::MIN, f32::max);
    assert!(top < 6.0, "bodies still up at {top} m after 300 steps");
    // Contacts happened between bodies, not just with the ground.
    assert!(
        most_between_bodies >= 3,
        "at most {most_between_bodies} body-body contacts: the bodies never piled up"
    );
}

#[test]
fn unrelated_bodies_far_away_do_not_change_the_results() {
    // Bodies that never interact with the pile (40 m away, spawned after it so the pile's
    // entities keep their order) share the broad phase tree and the solver arrays but no
    // constraint; the pile's arithmetic must be exactly the same.
    let (mut a, bodies_a) = pile();
    let (mut b, bodies_b) = pile();
    for i in 0..5 {
        spawn(
            &mut b,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.5),
                Transform::from_xyz(40.0, 1.0 + 2.0 * i as f32, 40.0),
            ),
        );
    }
    step(&mut a, 200);
    step(&mut b, 200);
    assert_eq!(state(&a, &bodies_a), state(&b, &bodies_b));
}

#[test]
fn a_rerun_later_in_the_same_process_is_identical() {
    // No hidden global state (caches, counters) carries over between apps.
    let (mut a, bodies_a) = pile();
    step(&mut a, 150);
    let first = state(&a, &bodies_a);
    drop(a);
    let (mut b, bodies_b) = pile();
    step(&mut b, 150);
    assert_eq!(first, state(&b, &bodies_b));
}
