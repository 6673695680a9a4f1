//! Sleeping with joints: joined bodies form one island, fall asleep together, and a sleeping
//! body is woken when an awake body it is joined to pulls on it.

mod common;
mod joints_common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

/// Steps until every body in `bodies` sleeps, at most `max` steps, checking on every step
/// that they are all asleep or all awake (one island). Returns the steps taken.
fn steps_until_island_sleeps(app: &mut App, bodies: &[Entity], max: usize) -> Option<usize> {
    for k in 1..=max {
        app.update();
        let asleep = bodies.iter().filter(|&&b| is_sleeping(app, b)).count();
        assert!(
            asleep == 0 || asleep == bodies.len(),
            "step {k}: {asleep} of {} joined bodies asleep: not one island",
            bodies.len()
        );
        if asleep == bodies.len() {
            return Some(k);
        }
    }
    None
}

#[test]
fn hanging_chain_at_rest_sleeps_as_one_island_and_wakes_as_one() {
    let mut app = app();
    let chain = chain(&mut app, 10, |_| None);
    // Starting at rest at its rest length, it should sleep half a second (time_to_sleep) after
    // its speeds drop below the threshold; 5 s is plenty.
    let slept = steps_until_island_sleeps(&mut app, &chain.links, (5.0 / DT) as usize)
        .expect("the resting chain did not fall asleep within 5 s");
    println!(
        "10-link chain fell asleep after {slept} steps ({:.2} s)",
        slept as f32 * DT
    );
    assert!(slept as f32 * DT >= SleepThreshold::default().time_to_sleep);
    let rest: Vec<Vec3> = chain.links.iter().map(|&l| position(&app, l)).collect();
    step(&mut app, 32);
    for (&l, &p) in chain.links.iter().zip(&rest) {
        assert!(is_sleeping(&app, l));
        assert_eq!(position(&app, l), p, "a sleeping link moved");
    }
    // Kick the bottom link: the whole chain wakes in the same step.
    let bottom = *chain.links.last().unwrap();
    set(
        &mut app,
        bottom,
        ExternalImpulse::new(Vec3::new(50.0, 0.0, 0.0)),
    );
    step(&mut app, 1);
    let awake = chain
        .links
        .iter()
        .filter(|&&l| !is_sleeping(&app, l))
        .count();
    assert_eq!(
        awake,
        chain.links.len(),
        "only {awake} links woke after kicking the bottom one"
    );
    step(&mut app, 16);
    // And the kick travelled up the chain: the top link moves too.
    assert!(
        speed(&app, chain.links[0]) > 0.0,
        "the top link did not move"
    );
}

#[test]
fn sleeping_body_is_woken_by_awake_joined_body() {
    let mut app = app();
    // A ball resting on the ground, asleep.
    ground(&mut app);
    let sleeper = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Mass(1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    step(&mut app, (2.0 / DT) as usize);
    assert!(
        is_sleeping(&app, sleeper),
        "the resting ball did not fall asleep in 2 s"
    );
    let rest = position(&app, sleeper);
    // An awake, heavy ball 3 m up and 1 m to the side, tied to the sleeper by a 1.5 m rope:
    // as it falls past the ground's level it pulls the sleeper along.
    let faller = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.2),
            Mass(20.0),
            Transform::from_xyz(3.0, 1.0, 0.0),
            LinearVelocity(Vec3::new(4.0, 0.0, 0.0)),
        ),
    );
    spawn(
        &mut app,
        DistanceJoint::new(sleeper, faller).with_limits(0.0, 3.5),
    );
    // The rope is slack at first (3.0 m of 3.5 m): the faller moves away, the sleeper stays
    // asleep until the rope goes taut.
    step(&mut app, 1);
    assert!(!is_sleeping(&app, faller));
    let mut woke_at = None;
    for k in 2..=64 {
        step(&mut app, 1);
        if !is_sleeping(&app, sleeper) {
            woke_at = Some(k);
            break;
        }
    }
    let woke_at = woke_at.expect("the sleeping ball was never woken by the rope");
    step(&mut app, 16);
    let moved = (position(&app, sleeper) - rest).length();
    println!("sleeping ball woken {woke_at} steps after the faller appeared; moved {moved:.3} m");
    assert!(
        !is_sleeping(&app, sleeper),
        "fell asleep again while being dragged"
    );
    // Dragged by a 20 kg ball at 4 m/s: well over a centimetre within a quarter second.
    assert!(moved > 0.01, "woken but not dragged: moved {moved} m");
}
