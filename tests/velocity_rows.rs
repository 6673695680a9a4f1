//! Velocity constraint rows (`ConstraintRow`, `VelocityConstraint`): hard rows with a velocity
//! target, implicit springs against the damped-oscillator solution, impulse limits,
//! restitution, and bad input.

use crate::common;

use std::f32::consts::PI;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// One row between a body and the world. With `origin` set, the row's error is refreshed each
/// step to `linear0 · (centre of mass − origin)`, the position along the row.
#[derive(Component)]
struct WorldRow {
    body: Entity,
    row: ConstraintRow,
    origin: Option<Vec3>,
    impulses: Vec<f32>,
}

impl VelocityConstraint<1> for WorldRow {
    fn entities(&self) -> [Entity; 1] {
        [self.body]
    }
    fn rows(&self, [body]: [&RigidBodyQueryItem; 1], rows: &mut RowSink) {
        let mut row = self.row;
        if let Some(origin) = self.origin {
            row.geometric_error = row.linear0.dot(body.current_center_of_mass() - origin);
        }
        rows.add(row);
    }
    fn impulses(&mut self, impulses: &[f32]) {
        self.impulses = impulses.to_vec();
    }
}

impl MapEntities for WorldRow {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.body = mapper.get_mapped(self.body);
    }
}

/// Rows between two bodies.
#[derive(Component)]
struct PairRows {
    bodies: [Entity; 2],
    rows: Vec<ConstraintRow>,
}

impl VelocityConstraint<2> for PairRows {
    fn entities(&self) -> [Entity; 2] {
        self.bodies
    }
    fn rows(&self, _: [&RigidBodyQueryItem; 2], rows: &mut RowSink) {
        for row in &self.rows {
            rows.add(*row);
        }
    }
}

impl MapEntities for PairRows {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.bodies = self.bodies.map(|e| mapper.get_mapped(e));
    }
}

/// A row that names a body index its constraint does not have.
#[derive(Component)]
struct BadIndex {
    body: Entity,
}

impl VelocityConstraint<1> for BadIndex {
    fn entities(&self) -> [Entity; 1] {
        [self.body]
    }
    fn rows(&self, _: [&RigidBodyQueryItem; 1], rows: &mut RowSink) {
        rows.add_between(
            3,
            None,
            ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO),
        );
    }
}

impl MapEntities for BadIndex {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.body = mapper.get_mapped(self.body);
    }
}

/// A headless app with the three test constraints registered.
fn rows_app() -> App {
    let mut app = app();
    app.add_systems(
        PhysicsSchedule,
        (
            solve_velocity_constraint::<WorldRow, 1>,
            solve_velocity_constraint::<PairRows, 2>,
            solve_velocity_constraint::<BadIndex, 1>,
        )
            .in_set(SolverSet::PrepareJoints),
    );
    app
}

/// A collider-less ball of `mass` kg (the collider is in no layer, so nothing collides).
fn ball(app: &mut App, mass: f32, at: Vec3) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            CollisionLayers::NONE,
            Mass(mass),
            SleepingDisabled,
            Transform::from_translation(at),
        ),
    )
}

fn world_row(app: &mut App, body: Entity, row: ConstraintRow, origin: Option<Vec3>) -> Entity {
    spawn(
        app,
        WorldRow {
            body,
            row,
            origin,
            impulses: Vec::new(),
        },
    )
}

/// A hard row with a velocity target sets the speed along its Jacobian exactly (the relax
/// pass is a rigid solve of a single row), step after step, against gravity; other
/// directions are untouched.
#[test]
fn hard_row_velocity_target_holds_against_gravity() {
    let mut app = rows_app();
    let lift = ball(&mut app, 2.0, Vec3::new(0.0, 1.0, 0.0));
    world_row(
        &mut app,
        lift,
        ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO).with_velocity_target(0.5),
        None,
    );
    // Two bodies: the row holds their relative vertical speed while one of them feels no
    // gravity, so the row carries the whole difference.
    let a = ball(&mut app, 3.0, Vec3::new(5.0, 0.0, 0.0));
    let b = ball(&mut app, 1.0, Vec3::new(5.0, 2.0, 0.0));
    set(&mut app, b, GravityScale(0.0));
    spawn(
        &mut app,
        PairRows {
            bodies: [a, b],
            rows: vec![
                ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO).with_velocity_target(-0.7),
            ],
        },
    );
    for n in 1..=200 {
        step(&mut app, 1);
        let v = velocity(&app, lift);
        assert!((v.y - 0.5).abs() < 1e-4, "step {n}: lift speed {}", v.y);
        assert!(v.x.abs() < 1e-6 && v.z.abs() < 1e-6);
        let relative = velocity(&app, a).y - velocity(&app, b).y;
        assert!(
            (relative + 0.7).abs() < 1e-4,
            "step {n}: relative speed {relative}"
        );
    }
}

/// Zero crossings (upwards) of a sampled signal, by linear interpolation, in seconds.
fn upward_crossings(x: &[f32], dt: f32) -> Vec<f32> {
    (1..x.len())
        .filter(|&i| x[i - 1] < 0.0 && x[i] >= 0.0)
        .map(|i| (i as f32 - 1.0 + -x[i - 1] / (x[i] - x[i - 1])) * dt)
        .collect()
}

/// Extreme values of a sampled signal, refined by a parabola through three samples.
fn extrema(x: &[f32]) -> Vec<f32> {
    let mut values = vec![x[0]];
    for i in 1..x.len() - 1 {
        let (a, b, c) = (x[i - 1], x[i], x[i + 1]);
        if (b - a) * (c - b) < 0.0 {
            let p = 0.5 * (a - c) / (a - 2.0 * b + c);
            values.push(b - 0.25 * (a - c) * p);
        }
    }
    values
}

/// Positions along x of a ball of `mass` on a spring row, released at rest 1 m out, sampled
/// once per step for `seconds`.
fn spring_run(mass: f32, row: ConstraintRow, seconds: f32) -> Vec<f32> {
    let mut app = rows_app();
    let body = ball(&mut app, mass, Vec3::new(1.0, 0.0, 0.0));
    set(&mut app, body, GravityScale(0.0));
    world_row(&mut app, body, row, Some(Vec3::ZERO));
    let mut x = vec![1.0];
    for _ in 0..(seconds / DT) as usize {
        step(&mut app, 1);
        x.push(position(&app, body).x);
    }
    x
}

/// An undamped force spring of k = 4 N/m on 1 kg oscillates with period 2π/√(k/m) = π s.
/// The implicit (backward Euler) spring lengthens the period by (ωh)²/3 ≈ 2·10⁻⁵ at the
/// 1/256 s substep: the 1 % asked for is all margin.
#[test]
fn spring_row_period_matches_the_oscillator() {
    let x = spring_run(
        1.0,
        ConstraintRow::linear(Vec3::X, Vec3::ZERO, Vec3::ZERO).with_spring(4.0, 0.0),
        10.0,
    );
    let crossings = upward_crossings(&x, DT);
    assert!(crossings.len() >= 3, "{crossings:?}");
    let period = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f32;
    let expected = 2.0 * PI / (4.0f32 / 1.0).sqrt();
    println!("spring period {period} s, theory {expected} s");
    assert!(
        (period / expected - 1.0).abs() < 0.01,
        "period {period} vs {expected}"
    );
}

/// A damped acceleration spring (k = 4/s², c = 2ζω with ζ = 0.4) on a 2 kg ball: the ratio of
/// successive extremes is exp(−ζω T_d / 2), so ζ = δ / √(π² + δ²) with δ the log ratio.
/// Backward Euler adds a decay rate of ω²h/2 to the true ζω, a relative error of
/// ωh / (2ζ) ≈ 1 % here; the extremes are refined by parabolas (error ~ (ω dt)³). The
/// acceleration spring ignores the mass, so ω = 2 rad/s at 2 kg too.
#[test]
fn spring_row_decays_with_its_damping_ratio() {
    let (omega, zeta) = (2.0f32, 0.4f32);
    let x = spring_run(
        2.0,
        ConstraintRow::linear(Vec3::X, Vec3::ZERO, Vec3::ZERO)
            .with_acceleration_spring(omega * omega, 2.0 * zeta * omega),
        4.0,
    );
    let peaks = extrema(&x);
    assert!(peaks.len() >= 3, "{peaks:?}");
    for pair in peaks.windows(2).take(2) {
        let delta = (pair[0] / pair[1]).abs().ln();
        let measured = delta / (PI * PI + delta * delta).sqrt();
        println!("extremes {} → {}: ζ = {measured}", pair[0], pair[1]);
        assert!(
            (measured / zeta - 1.0).abs() < 0.02,
            "ζ {measured} vs {zeta}"
        );
    }
    // And the damped period T_d = 2π / (ω √(1 − ζ²)), within 1 %.
    let crossings = upward_crossings(&x, DT);
    let ups: Vec<f32> = (1..x.len())
        .filter(|&i| x[i - 1] > 0.0 && x[i] <= 0.0)
        .map(|i| (i as f32 - 1.0 + x[i - 1] / (x[i - 1] - x[i])) * DT)
        .collect();
    let half = crossings[0] - ups[0];
    let expected = PI / (omega * (1.0 - zeta * zeta).sqrt());
    assert!(
        (half / expected - 1.0).abs() < 0.01,
        "half period {half} vs {expected}"
    );
}

/// A motor row with `max_impulse = F·dt` asks for far more speed than it can give: it pushes
/// with exactly F, so the 4 kg ball's speed grows at F/m, and the impulse it reports never
/// exceeds the limit.
#[test]
fn impulse_limit_caps_a_motor() {
    let mut app = rows_app();
    let body = ball(&mut app, 4.0, Vec3::ZERO);
    set(&mut app, body, GravityScale(0.0));
    let force = 10.0;
    let motor = world_row(
        &mut app,
        body,
        ConstraintRow::linear(Vec3::X, Vec3::ZERO, Vec3::ZERO)
            .with_velocity_target(100.0)
            .with_impulse_limits(-force * DT, force * DT),
        None,
    );
    let steps = 128;
    for n in 1..=steps {
        step(&mut app, 1);
        let expected = force / 4.0 * n as f32 * DT;
        let v = velocity(&app, body).x;
        assert!(
            v <= expected * 1.0001 + 1e-6,
            "step {n}: {v} exceeds {expected}"
        );
        let impulses = &app.world().get::<WorldRow>(motor).unwrap().impulses;
        if let Some(&p) = impulses.first() {
            assert!(p <= force * DT * (1.0 + 1e-5), "impulse {p}");
        }
    }
    let acceleration = velocity(&app, body).x / (steps as f32 * DT);
    println!(
        "motor acceleration {acceleration} m/s², F/m = {}",
        force / 4.0
    );
    assert!((acceleration / (force / 4.0) - 1.0).abs() < 0.01);
}

/// Drops a 1 kg ball from `height` onto a one-sided restitution row at y = 0 and returns
/// (speed just before the bounce step, speed after it, highest speed upwards afterwards).
fn bounce(height: f32, restitution: f32, threshold: f32) -> (f32, f32, f32) {
    let mut app = rows_app();
    let body = ball(&mut app, 1.0, Vec3::new(0.0, height, 0.0));
    world_row(
        &mut app,
        body,
        ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO)
            .with_impulse_limits(0.0, f32::INFINITY)
            .with_restitution(restitution, threshold),
        Some(Vec3::ZERO),
    );
    let mut before = 0.0;
    for _ in 0..400 {
        let v = velocity(&app, body).y;
        step(&mut app, 1);
        let after = velocity(&app, body).y;
        if after > v + 0.1 {
            // The impact step: the row reversed (or stopped) the fall.
            before = v;
            let mut highest: f32 = after;
            for _ in 0..5 {
                step(&mut app, 1);
                highest = highest.max(velocity(&app, body).y);
            }
            return (before, after, highest);
        }
    }
    (before, 0.0, 0.0)
}

/// Above the threshold the ball leaves at e times its approach speed (exactly: the bounce is
/// the row's velocity target and the relax pass sets it); below the threshold it stops. The
/// approach speed is the reference's pre-solve speed: the velocity at the step's start plus
/// the step's gravity.
#[test]
fn restitution_row_bounces_above_the_threshold_only() {
    let (before, after, _) = bounce(1.0, 0.6, 1.0);
    let approach = before - g() * DT;
    println!("fell at {approach} m/s, left at {after} m/s");
    assert!(approach < -4.0, "{approach}");
    assert!(
        (after + 0.6 * approach).abs() < 1e-3 * approach.abs(),
        "{after} vs {}",
        -0.6 * approach
    );
    // From 2 cm the ball lands at about 0.6 m/s, below the 1 m/s threshold: no bounce.
    let (before, after, highest) = bounce(0.02, 0.6, 1.0);
    println!("slow: fell at {before} m/s, left at {after} m/s");
    assert!(before < -0.3 && before > -1.0, "{before}");
    assert!(after.abs() < 1e-3 && highest < 1e-3, "{after} {highest}");
}

/// NaN in a row, min > max and a body index the constraint lacks are each reported once,
/// naming the constraint entity; the row is skipped and the world keeps simulating. A
/// constraint naming a despawned body is skipped too.
#[test]
fn bad_rows_are_reported_once_and_skipped() {
    let ((entities, finite, good_speed, fall), warnings) = capture_warnings(|| {
        let mut app = rows_app();
        let good = ball(&mut app, 1.0, Vec3::ZERO);
        set(&mut app, good, GravityScale(0.0));
        world_row(
            &mut app,
            good,
            ConstraintRow::linear(Vec3::X, Vec3::ZERO, Vec3::ZERO).with_velocity_target(1.0),
            None,
        );
        let victim = ball(&mut app, 1.0, Vec3::new(3.0, 0.0, 0.0));
        let nan = world_row(
            &mut app,
            victim,
            ConstraintRow::linear(Vec3::new(f32::NAN, 1.0, 0.0), Vec3::ZERO, Vec3::ZERO),
            None,
        );
        let inverted = world_row(
            &mut app,
            victim,
            ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO).with_impulse_limits(1.0, -1.0),
            None,
        );
        let index = spawn(&mut app, BadIndex { body: victim });
        let gone = ball(&mut app, 1.0, Vec3::new(6.0, 0.0, 0.0));
        let missing = world_row(&mut app, gone, ConstraintRow::angular(Vec3::Y), None);
        app.world_mut().despawn(gone);
        step(&mut app, 64);
        let finite = all_bodies_finite(&mut app);
        let fall = velocity(&app, victim).y;
        (
            [nan, inverted, index, missing],
            finite,
            velocity(&app, good).x,
            fall,
        )
    });
    assert!(finite);
    assert!((good_speed - 1.0).abs() < 1e-4, "{good_speed}");
    // The skipped rows held nothing: the victim fell freely for 1 s.
    assert!((fall + g()).abs() < 1e-3, "{fall}");
    for entity in entities {
        let name = format!("{entity}");
        let count = warnings.iter().filter(|w| w.contains(&name)).count();
        assert_eq!(count, 1, "{name}: {warnings:?}");
    }
}

/// `keep_bias`: a ball 0.1 m from where a hard row (target speed 0) wants it, gravity off.
/// After one step the relax pass has removed the correction's speed (the row's speed is its
/// target, 0, to 1e-4), unless the row keeps the bias: then the ball leaves the step still
/// moving towards where the row wants it. Both have moved towards it.
#[test]
fn keep_bias_keeps_the_correction_speed_through_the_relax_pass() {
    let run = |keep: bool| {
        let mut app = rows_app();
        let body = ball(&mut app, 1.0, Vec3::new(0.0, 0.1, 0.0));
        set(&mut app, body, GravityScale(0.0));
        let row = ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO);
        let row = if keep { row.keeping_bias() } else { row };
        world_row(&mut app, body, row, Some(Vec3::ZERO));
        step(&mut app, 1);
        (position(&app, body).y, velocity(&app, body).y)
    };
    let (relaxed_y, relaxed_v) = run(false);
    assert!(
        relaxed_y < 0.1 && relaxed_v.abs() < 1e-4,
        "{relaxed_y}, {relaxed_v}"
    );
    let (kept_y, kept_v) = run(true);
    assert!(kept_y < 0.1 && kept_v < -0.1, "{kept_y}, {kept_v}");
}
