//! A level-file fuzzer. A level written by the engine's own serialization (bodies of every
//! kind, every collider kind including a triangle mesh, a heightfield, hulls and a compound, a
//! child collider, joints of every kind, casters, and the settings resources) is mutated at
//! random: numbers replaced by extreme values (NaN, ±∞, ±1e30, 1e-30, 0, −1, 2³², ...), list
//! items dropped, duplicated or the list emptied, two list items or two field values swapped,
//! bytes changed. Each mutated file is read and written into a world that also holds a ground
//! and 1,089 resting balls (enough for every stage to share its work out), then stepped 60
//! times with every step on the compute pool (with the `parallel` feature, on two threads).
//!
//! Checked every case: nothing panics, no case runs for more than a minute, and after every
//! step every body's pose and velocities are finite (a non-finite value the file gives is
//! replaced by its fallback before the first step uses it). A file that does not parse, or that
//! Bevy refuses to write into the world, is a refused case, not a failure.
//!
//! CI runs [`CASES`] cases from seed 0. A long run (it prints what it did):
//!
//! ```text
//! LEVEL_FUZZ_CASES=20000 cargo test --release --features parallel,serialize --test fuzz \
//!     level_fuzz -- --nocapture
//! ```
//!
//! A failure names its seed; `LEVEL_FUZZ_FIRST=<seed> LEVEL_FUZZ_CASES=1 LEVEL_FUZZ_VERBOSE=1`
//! replays it, printing each mutation and writing the mutated level to the temporary
//! directory. The base level, and so each seed's mutations, depend on the features the test is
//! built with (they decide which types the scene holds).

use std::ops::Range;
use std::sync::OnceLock;

use bevy::prelude::*;
use impetus3d::prelude::*;
use parry3d::shape::SharedShape;

use crate::Rng;
use crate::common::ron_text::list_items;
use crate::common::{level, *};

/// Cases CI runs.
const CASES: u64 = 100;

/// The level every case mutates, as RON text, made once.
fn base_level() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| level::save(&build_level()))
}

/// A level with something of every kind the engine saves, beside the ground's grid of balls
/// (which [`case_world`] adds).
fn build_level() -> App {
    let mut app = app();
    let world = app.world_mut();
    // Static level pieces: a triangle-mesh ramp and a heightfield, each with bodies above.
    let grid = |n: usize, f: fn(f32, f32) -> f32| {
        let vertices = (0..n * n)
            .map(|k| {
                let (i, j) = ((k / n) as f32, (k % n) as f32);
                Vec3::new(i, f(i, j), j)
            })
            .collect();
        let index = |i: usize, j: usize| (i * n + j) as u32;
        let triangles = (0..(n - 1) * (n - 1))
            .flat_map(|k| {
                let (i, j) = (k / (n - 1), k % (n - 1));
                [
                    [index(i, j), index(i, j + 1), index(i + 1, j)],
                    [index(i + 1, j), index(i, j + 1), index(i + 1, j + 1)],
                ]
            })
            .collect();
        Collider::trimesh(vertices, triangles)
    };
    world.spawn((
        RigidBody::Static,
        grid(5, |i, j| 0.1 * (i + j)),
        Transform::from_xyz(30.0, 0.0, 0.0),
    ));
    let heights = (0..7)
        .map(|i| (0..7).map(|j| 0.05 * (i * j) as f32).collect())
        .collect();
    world.spawn((
        RigidBody::Static,
        Collider::heightfield(heights, Vec3::new(6.0, 1.0, 6.0)),
        Transform::from_xyz(-30.0, 0.0, 0.0),
    ));
    // Dynamic bodies of every shape, above the two pieces, with materials and overrides.
    let hull = Collider::convex_hull(vec![
        Vec3::ZERO,
        Vec3::X,
        Vec3::Y,
        Vec3::Z,
        Vec3::new(0.8, 0.8, 0.8),
    ])
    .unwrap();
    let shapes = [
        Collider::sphere(0.4),
        Collider::cuboid(0.8, 0.5, 0.6),
        Collider::capsule(0.3, 0.6),
        Collider::cylinder(0.4, 0.8),
        hull.clone(),
        Collider::compound(vec![
            (Vec3::ZERO, Quat::IDENTITY, Collider::cuboid(1.0, 0.2, 1.0)),
            (Vec3::Y, Quat::from_rotation_x(0.4), Collider::sphere(0.3)),
            (Vec3::NEG_Y, Quat::IDENTITY, hull),
        ]),
        SharedShape::round_cuboid(0.3, 0.3, 0.3, 0.05).into(),
        SharedShape::cone(0.4, 0.3).into(),
    ];
    let mut bodies = Vec::new();
    for (k, shape) in shapes.into_iter().enumerate() {
        let x = if k % 2 == 0 { 31.5 } else { -30.0 };
        let at = Vec3::new(x + 0.3 * k as f32, 2.0 + k as f32, 1.0 + 0.2 * k as f32);
        let body = world
            .spawn((
                RigidBody::Dynamic,
                shape,
                Transform::from_translation(at)
                    .with_rotation(Quat::from_rotation_z(0.2 * k as f32)),
                LinearVelocity(Vec3::new(0.5, 0.0, -0.3)),
                AngularVelocity(Vec3::new(0.0, 1.0, 0.5)),
                Friction::new(0.6),
                Restitution::new(0.3),
            ))
            .id();
        bodies.push(body);
    }
    world.entity_mut(bodies[0]).insert((
        Mass(3.0),
        CenterOfMass(Vec3::new(0.0, -0.1, 0.0)),
        SweptCcd::default(),
    ));
    world.entity_mut(bodies[1]).insert((
        ColliderDensity(500.0),
        LinearDamping(0.2),
        AngularDamping(0.3),
    ));
    world
        .entity_mut(bodies[2])
        .insert((GravityScale(0.5), LockedAxes::new().lock_rotation_x()));
    world
        .entity_mut(bodies[3])
        .insert((ConstantForce(Vec3::X), ExternalImpulse::new(Vec3::Y)));
    world
        .entity_mut(bodies[4])
        .insert(CollisionLayers::new(0b01, 0b11));
    // A collider on a child entity, offset from its body, and a sensor.
    let parent = bodies[5];
    world.spawn((
        Collider::sphere(0.25),
        Transform::from_xyz(0.0, 0.0, 0.8),
        ChildOf(parent),
    ));
    world.spawn((
        Collider::cuboid(2.0, 2.0, 2.0),
        Sensor,
        Transform::from_xyz(-30.0, 1.0, 0.0),
    ));
    // A kinematic paddle sweeping over the heightfield.
    world.spawn((
        RigidBody::Kinematic,
        Collider::cuboid(2.0, 0.2, 0.2),
        Transform::from_xyz(-30.0, 0.6, -2.0),
        LinearVelocity(Vec3::new(0.0, 0.0, 1.0)),
    ));
    // Joints of every kind between the bodies.
    let b = |k: usize| bodies[k];
    world.spawn(FixedJoint::new(b(0), b(2)).with_local_anchor1(Vec3::X));
    world.spawn(DistanceJoint::new(b(1), b(3)).with_limits(0.5, 2.0));
    world.spawn(
        SphericalJoint::new(b(2), b(4))
            .with_swing_limits(-0.5, 0.5)
            .with_twist_limits(-0.3, 0.3),
    );
    world.spawn(
        RevoluteJoint::new(b(3), b(5))
            .with_hinge_axis(Vec3::Z)
            .with_angle_limits(-1.0, 1.0)
            .with_motor(JointMotor::velocity(1.0, 10.0)),
    );
    world.spawn(PrismaticJoint::new(b(4), b(6)).with_limits(-0.5, 0.5));
    world.spawn(
        D6Joint::new(b(6), b(7))
            .with_limit(D6Axis::X, -0.2, 0.2)
            .with_swing_cone(0.4, 0.6)
            .with_drive(D6Axis::Twist, D6Drive::new(50.0, 5.0))
            .with_drive_target(D6Axis::Twist, 0.3, 0.0),
    );
    // Casters.
    world.spawn(RayCaster::new(Vec3::new(30.0, 5.0, 1.0), Dir3::NEG_Y).with_max_hits(8));
    world.spawn(ShapeCaster::new(
        Collider::sphere(0.2),
        Vec3::new(-30.0, 5.0, 1.0),
        Quat::IDENTITY,
        Dir3::NEG_Y,
    ));
    app.insert_resource(XpbdIterations(6))
        .insert_resource(SubstepCount(4));
    app
}

/// A world for one case: the ground and a grid of resting balls, every step on the pool.
fn case_world() -> App {
    let mut app = app();
    app.insert_resource(ThreadUse::Parallel);
    ground(&mut app);
    for i in 0..33 {
        for j in 0..33 {
            spawn(
                &mut app,
                (
                    RigidBody::Dynamic,
                    Collider::sphere(0.2),
                    Transform::from_xyz(0.6 * i as f32 - 10.0, 0.2, 0.6 * j as f32 - 10.0),
                    SleepingDisabled,
                ),
            );
        }
    }
    app
}

/// Spans of the numeric literals in `text`.
fn numbers(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        // Not the digits inside a name (a type path or a field like `swing1`).
        let in_name = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts && !in_name {
            let start = i;
            i += 1;
            while i < bytes.len()
                && (bytes[i].is_ascii_digit()
                    || matches!(bytes[i], b'.' | b'e' | b'E')
                    || (matches!(bytes[i], b'-' | b'+') && matches!(bytes[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
            spans.push(start..i);
        } else {
            i += 1;
        }
    }
    spans
}

/// Values a mutation puts in place of a number.
const EXTREMES: [&str; 16] = [
    "NaN",
    "inf",
    "-inf",
    "0.0",
    "-0.0",
    "-1.0",
    "1e30",
    "-1e30",
    "1e-30",
    "0",
    "1",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "1000000000",
    "-2147483648",
];

/// Positions of the list openings (`[`) in `text`.
fn list_openings(text: &str) -> Vec<usize> {
    text.match_indices('[').map(|(i, _)| i).collect()
}

/// One random mutation of `text`, and what it did.
fn mutate(text: &str, rng: &mut Rng) -> (String, String) {
    let replace = |range: Range<usize>, new: &str| {
        format!("{}{}{}", &text[..range.start], new, &text[range.end..])
    };
    match rng.below(10) {
        // Numbers: the commonest mutation, as numbers are most of a level.
        0..=4 => {
            let spans = numbers(text);
            let span = spans[rng.below(spans.len())].clone();
            let new = if rng.chance(0.7) {
                EXTREMES[rng.below(EXTREMES.len())].to_string()
            } else {
                let old: f64 = text[span.clone()].parse().unwrap_or(1.0);
                format!("{:?}", old * 10f64.powi(rng.below(13) as i32 - 6))
            };
            let what = format!(
                "number {:?} at {} -> {new}",
                &text[span.clone()],
                span.start
            );
            (replace(span, &new), what)
        }
        // List lengths: drop an item, duplicate one (up to 64 times), or empty the list.
        5 | 6 => {
            let openings = list_openings(text);
            let at = openings[rng.below(openings.len())];
            let items = list_items(text, at);
            if items.is_empty() {
                return (text.to_string(), "nothing (an empty list)".to_string());
            }
            let k = rng.below(items.len());
            let item = items[k].clone();
            let (new, what) = match rng.below(3) {
                0 => {
                    let end = text[item.end..]
                        .find(',')
                        .map_or(item.end, |c| item.end + c + 1);
                    (replace(item.start..end, ""), "dropped")
                }
                1 => {
                    let copies = 1 + rng.below(64);
                    let copy = format!("{}, ", &text[item.clone()]).repeat(copies);
                    (replace(item.start..item.start, &copy), "duplicated")
                }
                _ => {
                    let span = items[0].start..items[items.len() - 1].end;
                    (replace(span, ""), "emptied")
                }
            };
            (
                new,
                format!("list at {at}: item {k} of {} {what}", items.len()),
            )
        }
        // Swaps: two items of a list, or the values of two fields of a struct.
        7 | 8 => {
            let openings: Vec<usize> = text.match_indices(['[', '(']).map(|(i, _)| i).collect();
            let at = openings[rng.below(openings.len())];
            let items = list_items_any(text, at);
            if items.len() < 2 {
                return (
                    text.to_string(),
                    "nothing (fewer than two items)".to_string(),
                );
            }
            let (i, j) = (rng.below(items.len()), rng.below(items.len()));
            let (a, b) = (items[i.min(j)].clone(), items[i.max(j)].clone());
            if a == b {
                return (text.to_string(), "nothing (the same item)".to_string());
            }
            let value = |r: &Range<usize>| match field_value(text, r) {
                Some(v) => v,
                None => r.clone(),
            };
            let (va, vb) = (value(&a), value(&b));
            let new = format!(
                "{}{}{}{}{}",
                &text[..va.start],
                &text[vb.clone()],
                &text[va.end..vb.start],
                &text[va.clone()],
                &text[vb.end..]
            );
            (
                new,
                format!("swapped items {i} and {j} of the group at {at}"),
            )
        }
        // Bytes.
        _ => {
            let at = rng.below(text.len());
            let at = (0..=at)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let end = (at + 1..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap();
            let new = [
                "", "0", "9", "-", ".", ",", "(", ")", "[", "]", ":", "e", " ", "\"",
            ][rng.below(14)];
            (replace(at..end, new), format!("byte at {at} -> {new:?}"))
        }
    }
}

/// [`list_items`] for a group opened by `(` as well as `[`.
fn list_items_any(text: &str, at: usize) -> Vec<Range<usize>> {
    if text.as_bytes()[at] == b'[' {
        return list_items(text, at);
    }
    // Parse the parenthesised group as if it were a list.
    let close = matching(text, at);
    let as_list = format!("[{}]", &text[at + 1..close]);
    list_items(&as_list, 0)
        .into_iter()
        .map(|r| r.start + at..r.end + at)
        .collect()
}

/// The position of the bracket closing the one at `open`.
fn matching(text: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The value's span of a `name: value` item, if it is one.
fn field_value(text: &str, item: &Range<usize>) -> Option<Range<usize>> {
    let s = &text[item.clone()];
    let colon = s.find(':')?;
    let name = &s[..colon];
    (name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty()).then(|| {
        let value = &s[colon + 1..];
        let start = item.start + colon + 1 + (value.len() - value.trim_start().len());
        start..item.end
    })
}

/// How a case ended, if not in a failure.
enum Outcome {
    /// The file did not parse, or Bevy would not write it into a world.
    Refused,
    /// It loaded and stepped 60 times.
    Stepped,
}

/// Runs case `seed`: mutates the base level 1–4 times, loads it and steps it.
fn run_case(seed: u64) -> Result<Outcome, String> {
    let mut rng = Rng(seed);
    let mut text = base_level().to_string();
    let verbose = std::env::var("LEVEL_FUZZ_VERBOSE").is_ok();
    for _ in 0..1 + rng.below(4) {
        let (mutated, what) = mutate(&text, &mut rng);
        if verbose {
            eprintln!("seed {seed}: {what}");
        }
        text = mutated;
    }
    if verbose {
        let path = std::env::temp_dir().join(format!("level_fuzz_{seed}.ron"));
        std::fs::write(&path, &text).unwrap();
        eprintln!("seed {seed}: the mutated level is in {}", path.display());
    }
    let mut app = case_world();
    if level::load_into(&mut app, &text).is_err() {
        return Ok(Outcome::Refused);
    }
    for k in 0..60 {
        app.update();
        if !all_bodies_finite(&mut app) {
            return Err(format!("seed {seed}, step {k}: a body is not finite"));
        }
    }
    Ok(Outcome::Stepped)
}

#[test]
fn mutated_level_files_load_and_step_without_panics_hangs_or_nan() {
    two_compute_threads();
    let stages = impetus3d::schedule::PARALLEL_COUNTERS
        .parallel_stages
        .load(std::sync::atomic::Ordering::Relaxed);
    let first = crate::env("LEVEL_FUZZ_FIRST", 0);
    let cases = crate::env("LEVEL_FUZZ_CASES", CASES);
    let start = std::time::Instant::now();
    let (outcomes, _warnings) = capture_warnings(|| {
        (first..first + cases)
            .map(|seed| {
                let name = format!("level fuzz case {seed}");
                let outcome = with_deadline(60, &name, || {
                    std::panic::catch_unwind(|| run_case(seed))
                        .unwrap_or_else(|_| Err(format!("seed {seed}: panicked")))
                });
                // Said at once, so that a long run that later hangs still names it.
                if let Err(failure) = &outcome {
                    eprintln!("level fuzz: {failure}");
                }
                if (seed - first + 1).is_multiple_of(1000) {
                    eprintln!("level fuzz: {} cases done", seed - first + 1);
                }
                outcome
            })
            .collect::<Vec<_>>()
    });
    let stepped = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(Outcome::Stepped)))
        .count();
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(Outcome::Refused)))
        .count();
    let failures: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    println!(
        "level fuzz: {cases} cases from seed {first} in {:.1} s: {stepped} loaded and stepped, \
         {refused} refused, {} failures",
        start.elapsed().as_secs_f32(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    if cfg!(feature = "parallel") && stepped > 0 {
        let now = impetus3d::schedule::PARALLEL_COUNTERS
            .parallel_stages
            .load(std::sync::atomic::Ordering::Relaxed);
        assert!(now > stages, "the cases' stages ran on the compute pool");
    }
    // The mutations leave most files readable, so most cases exercise the engine (a replay
    // of a few seeds may be refused).
    assert!(
        cases < 20 || stepped * 2 > cases as usize,
        "only {stepped} of {cases} cases loaded"
    );
}
