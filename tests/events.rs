//! Collision events: exactly one `CollisionStart` per begin of touching and one `CollisionEnd`
//! per end, for resting contacts, lifting, despawning and disabling; the opt-in observer form;
//! and `CollidingEntities`.
//!
//! Timing is checked against free fall: until the contact acts, a dropped body follows the
//! substepped semi-implicit Euler solution y_k = y_0 - g h² n (n + 1) / 2 after n = 4 k
//! substeps of h = dt / 4 (derived in tests/free_fall.rs). The narrow phase of step k sees the
//! positions step k - 1 ended with, so a pair starts touching in the first step after the one
//! that brought the gap within the contact tolerance (`SolverConfig::linear_slop`).

use crate::common;
use crate::event_log;

use bevy::prelude::*;
use common::*;
use event_log::*;
use impetus3d::prelude::*;

/// Height of the bottom of a body dropped from rest after `k` steps of free fall, above its
/// starting height.
fn fall(k: u64) -> f64 {
    let h = DT as f64 / 4.0;
    let n = 4.0 * k as f64;
    -(g() as f64) * h * h * n * (n + 1.0) / 2.0
}

/// The step whose narrow phase first sees a gap of `gap0` (closed by free fall) within
/// `tolerance`: one after the first step that ends with the gap that small.
fn touching_step(gap0: f64, tolerance: f64) -> u64 {
    (1..).find(|&k| gap0 + fall(k) <= tolerance).unwrap() + 1
}

/// A headless app recording collision messages, with a ground whose top is at y = 0.
fn scene() -> (App, Entity) {
    let mut app = app();
    record_events(&mut app);
    let ground = ground(&mut app);
    (app, ground)
}

/// A unit cube whose bottom starts `gap` above the ground.
fn drop_cube(app: &mut App, gap: f32) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5 + gap, 0.0),
        ),
    )
}

#[test]
fn landing_starts_once_and_resting_sends_nothing_more() {
    let (mut app, ground) = scene();
    let cube = drop_cube(&mut app, 0.5);
    step(&mut app, 320);
    let log = log(&app);
    let expected = touching_step(0.5, slop() as f64);
    assert_eq!(
        log.starts_between(cube, ground),
        vec![expected],
        "one start, in the step after free fall brought the gap within the tolerance"
    );
    // Nothing else touched, and a resting contact (asleep by now) sends no repeats.
    assert_eq!(log.starts.len(), 1, "{:?}", log.starts);
    assert!(log.ends.is_empty(), "{:?}", log.ends);
    let (_, start) = log.starts[0];
    assert_eq!(
        (start.collider1, start.collider2),
        (cube, ground),
        "collider1 is the collider created later"
    );
    let body_of = |c| Some(c);
    assert_eq!(
        (start.body1, start.body2),
        (body_of(start.collider1), body_of(start.collider2))
    );
    assert!(
        is_sleeping(&app, cube),
        "the cube should rest on the ground"
    );
}

#[test]
fn lifting_away_ends_once() {
    let (mut app, ground) = scene();
    let cube = drop_cube(&mut app, 0.02);
    step(&mut app, 300);
    // Launched upward at 4 m/s, the cube is airborne for 2 v / g = 0.82 s = 52 steps.
    set(&mut app, cube, LinearVelocity(Vec3::Y * 4.0));
    let lift = steps(&app);
    step(&mut app, 40);
    let log = log(&app);
    assert_eq!(log.starts_between(cube, ground).len(), 1);
    let ends = log.ends_between(cube, ground);
    assert_eq!(ends.len(), 1, "exactly one end: {ends:?}");
    // At 4 m/s the 5 mm tolerance is crossed within the first step after the lift.
    assert!(
        ends[0] <= lift + 2,
        "ended at step {}, lifted at {lift}",
        ends[0]
    );
    assert!(position(&app, cube).y > 1.0, "the cube is in the air");
}

#[test]
fn despawning_a_touching_body_ends_once() {
    let (mut app, ground) = scene();
    let cube = drop_cube(&mut app, 0.02);
    let other = drop_cube(&mut app, 0.02);
    set(&mut app, other, Transform::from_xyz(3.0, 0.52, 0.0));
    step(&mut app, 30);
    app.world_mut().despawn(cube);
    step(&mut app, 30);
    let log = log(&app);
    assert_eq!(log.starts_between(cube, ground).len(), 1);
    assert_eq!(log.ends_between(cube, ground).len(), 1);
    // The other cube's contact is untouched.
    assert_eq!(log.starts_between(other, ground).len(), 1);
    assert!(log.ends_between(other, ground).is_empty());
    assert_eq!(log.ends.len(), 1);
}

#[test]
fn despawning_a_touching_child_collider_ends_once() {
    let (mut app, ground) = scene();
    let body = spawn(
        &mut app,
        (RigidBody::Dynamic, Transform::from_xyz(0.0, 0.52, 0.0)),
    );
    let part = app
        .world_mut()
        .spawn((Collider::cuboid(1.0, 1.0, 1.0), ChildOf(body)))
        .id();
    let top = app
        .world_mut()
        .spawn((
            Collider::sphere(0.2),
            Transform::from_xyz(0.0, 0.7, 0.0),
            ChildOf(body),
        ))
        .id();
    step(&mut app, 30);
    assert_eq!(log(&app).starts_between(part, ground).len(), 1);
    let start = log(&app).starts[0].1;
    let body_of_part = if start.collider1 == part {
        start.body1
    } else {
        start.body2
    };
    assert_eq!(body_of_part, Some(body), "the message names the body");
    app.world_mut().despawn(part);
    step(&mut app, 30);
    let log = log(&app);
    assert_eq!(log.ends_between(part, ground).len(), 1);
    // The remaining sphere falls onto the ground and starts its own contact.
    assert_eq!(log.starts_between(top, ground).len(), 1);
    assert_eq!(log.ends.len(), 1);
}

#[test]
fn disabling_ends_once_and_enabling_starts_again() {
    let (mut app, ground) = scene();
    let cube = drop_cube(&mut app, 0.02);
    step(&mut app, 100);
    set(&mut app, cube, ColliderDisabled);
    step(&mut app, 1);
    let disabled_at = steps(&app);
    // One step without the collider: the cube sinks by g h² 4·5/2 = 0.24 mm at most, and
    // nothing is reported, however long it stays disabled.
    step(&mut app, 1);
    app.world_mut()
        .entity_mut(cube)
        .remove::<ColliderDisabled>();
    step(&mut app, 1);
    let enabled_at = steps(&app);
    step(&mut app, 100);
    let log = log(&app);
    assert_eq!(log.ends_between(cube, ground), vec![disabled_at]);
    let starts = log.starts_between(cube, ground);
    assert_eq!(starts.len(), 2, "{starts:?}");
    assert_eq!(starts[1], enabled_at);
    // Back on the ground, held up again.
    let y = position(&app, cube).y;
    assert!((y - 0.5).abs() < slop(), "y = {y}");
}

#[test]
fn disabled_collider_touches_nothing_and_does_not_push() {
    let (mut app, ground) = scene();
    let cube = drop_cube(&mut app, 0.5);
    set(&mut app, cube, ColliderDisabled);
    step(&mut app, 64);
    // It falls through the ground freely.
    let dy = position(&app, cube).y - 1.0;
    assert!((dy as f64 - fall(64)).abs() < 3e-4, "dy = {dy}");
    assert!(log(&app).starts_between(cube, ground).is_empty());
}

/// Counts observer runs.
#[derive(Resource, Default)]
struct Seen {
    /// (observer owner, the event as received)
    starts: Vec<(&'static str, CollisionStart)>,
    ends: Vec<(&'static str, CollisionEnd)>,
}

#[test]
fn observers_fire_once_on_opted_in_colliders_only() {
    let (mut app, ground) = scene();
    app.init_resource::<Seen>();
    let opted = drop_cube(&mut app, 0.3);
    set(&mut app, opted, CollisionEventsEnabled);
    let plain = drop_cube(&mut app, 0.3);
    set(&mut app, plain, Transform::from_xyz(3.0, 0.8, 0.0));
    let world = app.world_mut();
    world
        .entity_mut(opted)
        .observe(|on: On<CollisionStart>, mut seen: ResMut<Seen>| {
            seen.starts.push(("opted", *on.event()));
        })
        .observe(|on: On<CollisionEnd>, mut seen: ResMut<Seen>| {
            seen.ends.push(("opted", *on.event()));
        });
    world
        .entity_mut(plain)
        .observe(|on: On<CollisionStart>, mut seen: ResMut<Seen>| {
            seen.starts.push(("plain", *on.event()));
        });
    world.add_observer(|on: On<CollisionStart>, mut seen: ResMut<Seen>| {
        seen.starts.push(("global", *on.event()));
    });
    step(&mut app, 200);
    {
        let seen = app.world().resource::<Seen>();
        let expected = CollisionStart {
            collider1: opted,
            collider2: ground,
            body1: Some(opted),
            body2: Some(ground),
        };
        // The global observer and then the entity observer each see the opted-in cube's
        // landing once; the plain cube's landing (a message only) reaches no observer.
        assert_eq!(
            seen.starts,
            vec![("global", expected), ("opted", expected)],
            "observer runs"
        );
        assert!(seen.ends.is_empty());
        // Both landings were sent as messages.
        assert_eq!(log(&app).starts.len(), 2);
    }
    set(&mut app, opted, LinearVelocity(Vec3::Y * 4.0));
    step(&mut app, 20);
    let seen = app.world().resource::<Seen>();
    assert_eq!(
        seen.ends,
        vec![(
            "opted",
            CollisionEnd {
                collider1: opted,
                collider2: ground,
                body1: Some(opted),
                body2: Some(ground),
            }
        )]
    );
    assert_eq!(seen.starts.len(), 2);
}

#[test]
fn observer_receives_itself_as_collider1_in_either_creation_order() {
    // Two opted-in sensor zones, one spawned before the falling ball and one after, so that
    // one is the second collider of its pair and one the first (as messages, `collider1` is
    // the one created later); each zone's observer must still receive itself as `collider1`.
    let mut app = app();
    app.init_resource::<Seen>();
    let zone = |y: f32| {
        (
            Collider::cuboid(2.0, 0.5, 2.0),
            Sensor,
            CollisionEventsEnabled,
            Transform::from_xyz(0.0, y, 0.0),
        )
    };
    let upper = spawn(&mut app, zone(0.0));
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            Transform::from_xyz(0.0, 1.0, 0.0),
        ),
    );
    let lower = spawn(&mut app, zone(-1.5));
    for (zone, name) in [(upper, "upper"), (lower, "lower")] {
        app.world_mut()
            .entity_mut(zone)
            .observe(move |on: On<CollisionStart>, mut seen: ResMut<Seen>| {
                seen.starts.push((name, *on.event()));
            })
            .observe(move |on: On<CollisionEnd>, mut seen: ResMut<Seen>| {
                seen.ends.push((name, *on.event()));
            });
    }
    // One second of free fall takes the ball 4.9 m down, through both zones.
    step(&mut app, 64);
    let seen = app.world().resource::<Seen>();
    let start = |zone| CollisionStart {
        collider1: zone,
        collider2: ball,
        body1: None,
        body2: Some(ball),
    };
    let end = |zone| CollisionEnd {
        collider1: zone,
        collider2: ball,
        body1: None,
        body2: Some(ball),
    };
    assert_eq!(
        seen.starts,
        vec![("upper", start(upper)), ("lower", start(lower))]
    );
    assert_eq!(
        seen.ends,
        vec![("upper", end(upper)), ("lower", end(lower))]
    );
}

fn colliding(app: &App, e: Entity) -> Vec<Entity> {
    app.world()
        .get::<CollidingEntities>(e)
        .unwrap()
        .iter()
        .collect()
}

#[test]
fn colliding_entities_track_touching_colliders() {
    let (mut app, ground) = scene();
    let lower = drop_cube(&mut app, 0.02);
    set(&mut app, lower, CollidingEntities::default());
    let upper = drop_cube(&mut app, 1.04);
    step(&mut app, 100);
    let mut both = vec![ground, upper];
    both.sort();
    assert_eq!(colliding(&app, lower), both, "ground and the cube on top");
    // Inserted while touching: filled from the current contacts at the next step.
    set(&mut app, ground, CollidingEntities::default());
    step(&mut app, 1);
    assert_eq!(colliding(&app, ground), vec![lower]);

    // The upper cube is thrown up and leaves.
    set(&mut app, upper, LinearVelocity(Vec3::Y * 4.0));
    step(&mut app, 5);
    assert_eq!(colliding(&app, lower), vec![ground]);
    assert_eq!(colliding(&app, ground), vec![lower]);

    // The lower cube is moved far up: everything separates.
    set(&mut app, lower, Position(Vec3::new(0.0, 20.0, 0.0)));
    step(&mut app, 1);
    assert!(colliding(&app, lower).is_empty());
    assert!(colliding(&app, ground).is_empty());
}

/// Every `ContactForce` message so far, with its step.
#[derive(Resource, Default)]
struct Forces(Vec<(u64, ContactForce)>);

fn record_forces(app: &mut App) {
    app.init_resource::<Forces>().add_systems(
        PostUpdate,
        |mut log: ResMut<Forces>,
         mut read: MessageReader<ContactForce>,
         time: Res<PhysicsStepTime>| {
            let step = time.step_count;
            log.0.extend(read.read().map(|f| (step, *f)));
        },
    );
}

fn forces(app: &App) -> &[(u64, ContactForce)] {
    &app.world().resource::<Forces>().0
}

/// A unit cube of the default density weighs 1000 kg.
const CUBE_MASS: f32 = 1000.0;

/// A cube resting on the ground is pushed up by its weight, `m g`, in every step: while awake
/// (each step's normal impulses sum to `m g dt`), and once asleep (the pair is no longer solved
/// and reports the impulses of its last solved step). At rest, each substep's contact impulse
/// is what the momentum balance `Σλ = m g h + m Δv` leaves, and the cube's velocity change
/// `Δv` over a substep has decayed far below rounding once the contact has settled (the soft
/// contact, overdamped at damping ratio 10, relaxes with a time constant of `2ζ / ω`, a few
/// hundredths of a second; a second is allowed). What is left is rounding: 16 point impulses
/// (4 corners, 4 substeps) summed, each within a relative 6e-8, so at most 1e-6 of `m g`; the
/// bar is ten times that. The ground is a scale: its observer receives the force the cube
/// presses it with, downwards.
#[test]
fn a_resting_box_reports_its_weight_every_step() {
    #[derive(Resource, Default)]
    struct Scale(Vec<(u64, ContactForce)>);
    let (mut app, ground) = scene();
    record_forces(&mut app);
    app.init_resource::<Scale>();
    let weight = CUBE_MASS * g();
    set(&mut app, ground, ContactForceThreshold(0.5 * weight));
    app.world_mut().entity_mut(ground).observe(
        |on: On<ContactForce>, mut scale: ResMut<Scale>, time: Res<PhysicsStepTime>| {
            scale.0.push((time.step_count, *on.event()));
        },
    );
    let cube = drop_cube(&mut app, 0.0);
    let settle = 64;
    step(&mut app, 320);
    assert!(is_sleeping(&app, cube), "the cube should be asleep by now");
    let log = forces(&app);
    // One message per step, from the first.
    let steps_sent: Vec<u64> = log.iter().map(|(s, _)| *s).collect();
    assert_eq!(steps_sent, (1..=320).collect::<Vec<u64>>());
    for &(step, force) in log.iter().filter(|(s, _)| *s > settle) {
        assert_eq!((force.collider1, force.collider2), (cube, ground));
        assert_eq!((force.body1, force.body2), (Some(cube), Some(ground)));
        let error = (force.total_force - Vec3::Y * weight).length();
        assert!(
            error <= 1e-5 * weight,
            "step {step}: force on the cube {} N, weight {weight} N",
            force.total_force
        );
        assert!((force.total_force_magnitude - weight).abs() <= 1e-5 * weight);
        assert!((force.max_force_direction - Vec3::Y).length() <= 1e-6);
        // Four corners share the load: the hardest-pressed one takes at least a quarter.
        assert!(force.max_force_magnitude >= 0.25 * force.total_force_magnitude * (1.0 - 1e-5));
    }
    // The scale's observer: the same forces, seen from the ground.
    let scale = &app.world().resource::<Scale>().0;
    assert_eq!(scale.len(), log.len());
    for ((s1, seen), (s2, sent)) in scale.iter().zip(log) {
        assert_eq!(s1, s2);
        assert_eq!((seen.collider1, seen.collider2), (ground, cube));
        assert_eq!(seen.total_force, -sent.total_force);
        assert_eq!(seen.total_force_magnitude, sent.total_force_magnitude);
    }
}

/// Above the weight, a resting cube sends nothing, awake or asleep.
#[test]
fn a_resting_box_under_the_threshold_sends_nothing() {
    let (mut app, ground) = scene();
    record_forces(&mut app);
    set(
        &mut app,
        ground,
        ContactForceThreshold(1.1 * CUBE_MASS * g()),
    );
    let cube = drop_cube(&mut app, 0.0);
    step(&mut app, 320);
    assert!(is_sleeping(&app, cube));
    assert!(forces(&app).is_empty(), "{:?}", &forces(&app)[..1]);
}

/// A cube dropped from 1 m: the impact pushes far harder than its weight, in the step free fall
/// brings it to the ground (speculative contact stops it in that step), and the forces reported
/// account for its momentum: from the impact step on, the ground's impulse `Σ F dt` equals the
/// momentum the cube lost plus what gravity gave it, `m (v_after − v_before) + m g t`, up to
/// rounding. `v_before` is the exact free-fall speed, and the cube's f32 velocity rounds in
/// each of its 4 × 53 substep updates by up to ½ ulp(4.3 m/s) = 2.4e-7 m/s: 5e-5 m/s, 1.2e-5
/// of the impact speed; the bar is 1e-4 of the impact momentum `m v`.
#[test]
fn an_impact_reports_the_momentum_it_takes() {
    let (mut app, ground) = scene();
    record_forces(&mut app);
    set(&mut app, ground, ContactForceThreshold(0.0));
    let height = 1.0;
    let cube = drop_cube(&mut app, height);
    // The first step whose free-fall end position would be below the ground.
    let impact = (1..).find(|&k| height as f64 + fall(k) < 0.0).unwrap();
    let settled = impact + 24;
    step(&mut app, settled as usize);
    assert!(
        !is_sleeping(&app, cube),
        "the momentum balance needs the cube awake"
    );
    let log = forces(&app);
    // Speculative contact presses only in a substep that would take the cube through the
    // ground, and free fall keeps it above until the impact step.
    let first = log.first().expect("no contact force at all").0;
    assert_eq!(
        first, impact,
        "first force at step {first}, impact at {impact}"
    );
    let dt = DT as f64;
    let m = CUBE_MASS as f64;
    let before = -(g() as f64) * (impact - 1) as f64 * dt;
    let after = velocity(&app, cube).y as f64;
    let span = (settled - impact + 1) as f64 * dt;
    let impulse: f64 = (log.iter())
        .filter(|(s, _)| *s >= impact)
        .map(|(_, f)| f.total_force.y as f64 * dt)
        .sum();
    let expected = m * (after - before) + m * g() as f64 * span;
    assert!(
        (impulse - expected).abs() <= 1e-4 * m * before.abs(),
        "ground impulse {impulse} N s, momentum balance {expected} N s"
    );
    let (_, hit) = log.iter().find(|(s, _)| *s == impact).unwrap();
    assert!(
        hit.total_force.y > 2.0 * CUBE_MASS * g(),
        "impact force {} N",
        hit.total_force.y
    );
    assert_eq!(
        (hit.collider1, hit.collider2),
        (cube, ground),
        "collider1 is the collider created later"
    );
}

/// With the threshold between the weight and the impact, only the impact is reported.
#[test]
fn a_threshold_above_the_weight_reports_only_the_impact() {
    let (mut app, ground) = scene();
    record_forces(&mut app);
    set(
        &mut app,
        ground,
        ContactForceThreshold(2.0 * CUBE_MASS * g()),
    );
    drop_cube(&mut app, 1.0);
    step(&mut app, 320);
    let impact = (1..).find(|&k| 1.0 + fall(k) < 0.0).unwrap();
    let log = forces(&app);
    assert!(!log.is_empty(), "the impact was not reported");
    assert_eq!(
        log[0].0,
        impact,
        "{:?}",
        log.iter().map(|l| l.0).collect::<Vec<_>>()
    );
    assert!(
        log.iter().all(|(s, _)| *s <= impact + 4),
        "forces above twice the weight long after the impact: {:?}",
        log.iter().map(|l| l.0).collect::<Vec<_>>()
    );
}
