//! Sleeping with joints: joined bodies form one island, fall asleep together, and a sleeping
//! body is woken when an awake body it is joined to pulls on it.

use crate::common;
use crate::joints_common;

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

/// The faller's discrete free flight (semi-implicit Euler over 4 substeps a step, gravity
/// only) from `start` with `velocity`: its position after `steps` steps.
fn free_flight(start: Vec3, velocity: Vec3, steps: usize) -> Vec3 {
    let h = DT / 4.0;
    let (mut p, mut v) = (start, velocity);
    for _ in 0..4 * steps {
        v.y -= g() * h;
        p += v * h;
    }
    p
}

/// A sleeping ball resting on the ground, and a heavy awake ball thrown away from it, joined by
/// a new 3.5 m rope that starts slack (3.04 m). A new joint wakes both its bodies at once,
/// so the sleeper joins the next step whole. While the rope is slack the sleeper does not move
/// (the faller flies freely, exactly on its discrete free-flight path); from the step the
/// free-flight path would take the faller past 3.5 m, the rope holds them within the joint's
/// tolerance and drags the sleeper along the ground.
#[test]
fn new_joint_wakes_its_sleeping_body_and_drags_it_once_taut() {
    let mut app = app();
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
    let (start, thrown) = (Vec3::new(3.0, 1.0, 0.0), Vec3::new(4.0, 0.0, 0.0));
    let faller = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.2),
            Mass(20.0),
            Transform::from_translation(start),
            LinearVelocity(thrown),
        ),
    );
    spawn(
        &mut app,
        DistanceJoint::new(sleeper, faller).with_limits(0.0, 3.5),
    );
    assert!(!is_sleeping(&app, sleeper), "the new joint did not wake it");
    let taut = (1..64)
        .find(|&k| free_flight(start, thrown, k).distance(rest) > 3.5)
        .unwrap();
    for k in 1..taut {
        step(&mut app, 1);
        let flight = free_flight(start, thrown, k);
        assert!(
            position(&app, faller).distance(flight) < 1e-4,
            "step {k}: slack rope, yet the faller left its free flight"
        );
        assert!(
            position(&app, sleeper).distance(rest) < 1e-4,
            "step {k}: the sleeper moved while the rope was slack"
        );
    }
    for k in taut..taut + 16 {
        step(&mut app, 1);
        let length = position(&app, sleeper).distance(position(&app, faller));
        assert!(
            length < 3.5 + 1e-3,
            "step {k}: rope stretched to {length} m"
        );
    }
    let moved = position(&app, sleeper).x - rest.x;
    println!("rope taut at step {taut}; sleeper dragged {moved:.3} m in 0.25 s");
    // Dragged towards the faller, along the ground.
    assert!(moved > 0.1, "dragged only {moved} m");
    assert!((position(&app, sleeper).y - rest.y).abs() < 0.01);
}

/// A user constraint that names two bodies and does nothing: it only brings its bodies into
/// the step, the way any constraint does.
#[derive(Component)]
struct Tether([Entity; 2]);

impl XpbdConstraint<2> for Tether {
    fn entities(&self) -> [Entity; 2] {
        self.0
    }
    fn clear_lagrange_multipliers(&mut self) {}
    fn solve(&mut self, _: [&mut RigidBodyQueryItem; 2], _: f32) {}
}

impl bevy::ecs::entity::MapEntities for Tether {
    fn map_entities<M: bevy::ecs::entity::EntityMapper>(&mut self, mapper: &mut M) {
        self.0 = self.0.map(|e| mapper.get_mapped(e));
    }
}

/// A sleeping body that a user constraint brings into a step halfway through (its partner is
/// awake; the constraint is resolved in the first substep) gets that step's gravity in full:
/// with its platform gone it falls exactly on the discrete free-fall path from that step on,
/// neither hanging in the air for a step nor lagging behind.
#[test]
fn body_woken_mid_step_by_a_constraint_falls_from_that_step() {
    let mut app = app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<Tether, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let platform = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(2.0, 1.0, 2.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ),
    );
    let sleeper = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    step(&mut app, (2.0 / DT) as usize);
    assert!(is_sleeping(&app, sleeper));
    let rest = position(&app, sleeper);
    app.world_mut().despawn(platform);
    let floater = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.1),
            Transform::from_xyz(5.0, 0.0, 0.0),
            GravityScale(0.0),
            SleepingDisabled,
        ),
    );
    spawn(&mut app, Tether([sleeper, floater]));
    for k in 1..=8 {
        step(&mut app, 1);
        let expected = free_flight(rest, Vec3::ZERO, k);
        let y = position(&app, sleeper).y;
        assert!(
            (y - expected.y).abs() < 1e-5,
            "step {k}: at y = {y}, free fall from the first step gives {}",
            expected.y
        );
    }
}
