//! Contact recycling (`collision::recycling`). Between two shapes without curved surfaces, a
//! manifold is kept while its points moved less than 1 cm against the other collider and the
//! colliders turned less than 0.05 rad relative to each other since it was built; only the
//! points' distances are recomputed. Checked: a slow slide and a slow turn keep the contact,
//! and the points are rebuilt once the motion adds up to either bound (so a reported point,
//! midway between its anchor on the ground and its anchor carried with the box, trails the box
//! by at most half of it). A ball, capsule or cylinder on a shape without curved surfaces
//! keeps the normal in that shape's frame (a face's own normal) and its point is put back
//! where its surface meets it: checked by a ball rolling slowly at constant speed, cylinders
//! lying and standing that stay at rest, and a ball sliding over a box's edge that turns about
//! it and leaves it where theory says. Two curved shapes keep the normal in collider 1's frame:
//! checked by a ball sliding off a ball.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// The largest slide of a point before its manifold is rebuilt, m.
const RECYCLE_DISTANCE: f32 = 0.01;

/// The largest relative turn before a manifold is rebuilt, rad.
const RECYCLE_TURN: f32 = 0.05;

/// A frictionless box of full size `size` resting on the frictionless ground, moving at
/// `velocity` and turning at `spin` about the vertical.
fn moving_box(size: f32, velocity: Vec3, spin: f32) -> (App, Entity) {
    let mut app = app();
    let floor = ground(&mut app);
    set(&mut app, floor, Friction::new(0.0));
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(size, size, size),
            Transform::from_xyz(0.0, 0.5 * size, 0.0),
            LinearVelocity(velocity),
            AngularVelocity(Vec3::Y * spin),
            Friction::new(0.0),
            SleepingDisabled,
        ),
    );
    (app, body)
}

/// The touching pair's reported points, if the box touches the ground.
fn points(app: &mut App) -> Option<Vec<Vec3>> {
    app.world_mut()
        .run_system_cached(|collisions: Collisions| {
            let pair = collisions.iter().next()?;
            Some(pair.points().map(|p| p.point).collect::<Vec<_>>())
        })
        .unwrap()
}

/// How far each reported point is from the nearest bottom corner of the box (of full size
/// `size`), in the ground's plane.
fn corner_gaps(app: &App, body: Entity, size: f32, points: &[Vec3]) -> Vec<f32> {
    let (centre, turn) = (position(app, body), rotation(app, body));
    let half = 0.5 * size;
    let corners: Vec<Vec3> = [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)]
        .iter()
        .map(|&(x, z)| (centre + turn * Vec3::new(x * half, -half, z * half)).with_y(0.0))
        .collect();
    points
        .iter()
        .map(|p| {
            let p = p.with_y(0.0);
            corners
                .iter()
                .map(|c| c.distance(p))
                .fold(f32::INFINITY, f32::min)
        })
        .collect()
}

#[test]
fn a_box_sliding_slowly_keeps_its_contact_and_gets_fresh_points_every_centimetre() {
    // 5 cm/s: 0.8 mm per step, so each manifold is kept for about a dozen steps; 2 s slide
    // 10 cm, ten rebuilds.
    let speed = 0.05;
    let (mut app, body) = moving_box(1.0, Vec3::X * speed, 0.0);
    step(&mut app, 16);
    let start = position(&app, body).x;
    for n in 1..=128 {
        step(&mut app, 1);
        let points = points(&mut app).expect("the box lost its contact with the ground");
        assert_eq!(
            points.len(),
            4,
            "step {n}: a face contact has its four corners"
        );
        let worst = corner_gaps(&app, body, 1.0, &points)
            .into_iter()
            .fold(0.0, f32::max);
        // Half the slide allowed before a rebuild, and the step's own motion.
        let bound = 0.5 * RECYCLE_DISTANCE + speed * DT;
        assert!(
            worst <= bound,
            "step {n}: a point trails its corner by {worst} m (at most {bound})"
        );
        let y = position(&app, body).y;
        assert!((y - 0.5).abs() <= slop(), "step {n}: the box is at y = {y}");
    }
    // Frictionless: it keeps its speed (to the integrator's rounding over 2 s).
    let slid = position(&app, body).x - start;
    let expected = speed * 128.0 * DT;
    assert!(
        (slid - expected).abs() <= 1e-3,
        "slid {slid} m in 2 s, expected {expected} m"
    );
}

#[test]
fn a_box_turning_past_the_threshold_gets_fresh_points() {
    // A 10 cm box: its corners, 7 cm from the axis, move 1 cm only after 0.14 rad, so the
    // turn bound (0.05 rad) is what rebuilds the manifold. 0.3 rad/s: 0.005 rad per step.
    let (size, spin) = (0.1, 0.3);
    let (mut app, body) = moving_box(size, Vec3::ZERO, spin);
    step(&mut app, 16);
    let radius = 0.5 * size * std::f32::consts::SQRT_2;
    for n in 1..=128 {
        step(&mut app, 1);
        let points = points(&mut app).expect("the box lost its contact with the ground");
        let worst = corner_gaps(&app, body, size, &points)
            .into_iter()
            .fold(0.0, f32::max);
        // A corner moves `radius × angle`; the reported point trails by half of that.
        let bound = 0.5 * radius * (RECYCLE_TURN + spin * DT) + 1e-4;
        assert!(
            worst <= bound,
            "step {n}: a point trails its corner by {worst} m (at most {bound})"
        );
    }
    // Frictionless: it keeps turning at its own rate.
    let now = angular_velocity(&app, body).y;
    assert!(
        (now - spin).abs() <= 1e-3,
        "turns at {now} rad/s, set {spin}"
    );
}

/// A dynamic `collider` on the ground at `at`, turned by `rotation`, never asleep.
fn resting(app: &mut App, collider: Collider, at: Vec3, rotation: Quat) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            collider,
            Transform::from_translation(at).with_rotation(rotation),
            SleepingDisabled,
        ),
    )
}

/// The largest speed of the bodies' centres and of their surfaces (`radius` from the centre)
/// over `steps` steps.
fn fastest(app: &mut App, bodies: &[Entity], radius: f32, steps: usize) -> f32 {
    let mut fastest: f32 = 0.0;
    for _ in 0..steps {
        step(app, 1);
        for &body in bodies {
            let spin = angular_velocity(app, body).length() * radius;
            fastest = fastest.max(speed(app, body)).max(spin);
        }
    }
    fastest
}

#[test]
fn a_ball_rolling_slowly_keeps_its_speed() {
    // Rolling without slipping on a level floor is uniform motion: no force acts along the
    // floor. 3 cm/s moves the lowest point 0.5 mm per step, so the manifold is recycled for
    // about 20 steps at a time; a contact point carried round with the ball would trail
    // behind the lowest point and tip the ball on, faster and faster.
    let (radius, speed0) = (0.5, 0.03);
    let mut app = app();
    ground(&mut app);
    let ball = resting(
        &mut app,
        Collider::sphere(radius),
        Vec3::Y * radius,
        Quat::IDENTITY,
    );
    set(
        &mut app,
        ball,
        (
            LinearVelocity(Vec3::X * speed0),
            AngularVelocity(Vec3::NEG_Z * speed0 / radius),
        ),
    );
    step(&mut app, 300);
    let now = velocity(&app, ball);
    assert!(
        (now.x - speed0).abs() <= 1e-3 && now.z.abs() <= 1e-3,
        "rolls at {now} m/s after 300 steps, set {speed0} along x"
    );
    let y = position(&app, ball).y;
    assert!((y - radius).abs() <= slop(), "the ball is at y = {y}");
}

#[test]
fn a_cylinder_lying_on_the_ground_stays_where_it_was_put() {
    // Lying on its side, touching along a line: at rest, it has no reason to roll. Built afresh
    // every step, its contact line moved with the solver's noise and it rocked at 0.3–0.6
    // mm/s; with points carried round it rolled away (0.4 m/s within 10 s).
    let mut app = app();
    ground(&mut app);
    let (radius, length) = (0.35, 0.6);
    let lying = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    let cylinder = Collider::cylinder(radius, length);
    let body = resting(&mut app, cylinder, Vec3::Y * radius, lying);
    // Gravity's first step presses it into the ground; let that settle.
    step(&mut app, 64);
    let settled = position(&app, body);
    let fastest = fastest(&mut app, &[body], radius, 600);
    let moved = (position(&app, body) - settled).with_y(0.0).length();
    // At rest: below the 0.1 mm/s of a body the solver holds still, and no farther than that
    // speed takes it in 600 steps (the landing leaves it rolling at a few hundredths of a
    // millimetre per second, which nothing on a level floor slows).
    let bound = 1e-4;
    assert!(fastest <= bound, "moved at up to {fastest} m/s");
    let far = bound * 600.0 * DT;
    assert!(
        moved <= far,
        "drifted {moved} m along the ground (at most {far})"
    );
}

#[test]
fn a_cylinder_standing_on_another_comes_to_rest() {
    // Cap on cap: parry's normal between two cylinders comes from GJK/EPA and wobbles by a few
    // thousandths of a radian from step to step; snapped to the cap's axis, the contact square
    // stays where it is. Before, the upper one rocked at 1–4 mm/s for good.
    let mut app = app();
    ground(&mut app);
    let (radius, length) = (0.35, 0.6);
    let lower = resting(
        &mut app,
        Collider::cylinder(radius, length),
        Vec3::Y * 0.5 * length,
        Quat::IDENTITY,
    );
    let upper = resting(
        &mut app,
        Collider::cylinder(radius, length),
        Vec3::Y * (1.5 * length + 0.01),
        Quat::IDENTITY,
    );
    step(&mut app, 240);
    let fastest = fastest(&mut app, &[lower, upper], radius, 240);
    assert!(
        fastest <= 1e-4,
        "moving at up to {fastest} m/s after 240 steps"
    );
}

/// Steps a frictionless ball sliding at `v0` over a static support until 3 s have passed,
/// while its centre should move on the circle of radius `reach` about `pivot` (a point, or
/// with `about_line` the line through it along z), and checks it against theory: energy gives
/// v² = v₀² + 2 g R (1 − cos θ), and the ball leaves where gravity's normal part no longer
/// holds it there, g cos θ = v² / R: cos θ = (2 + v₀² / (g R)) / 3. Checked: past the top the
/// centre stays on the circle within the contact slop down to 0.02 above the leaving point,
/// and is clear of it by more than the slop at cos θ = 0.5 (free flight from the leaving point
/// for R = 2.25 m and v₀ = 0.5 m/s: 9.4 mm; the solver lets the ball float up to 1 mm off the
/// surface just before, fresh contacts or recycled), and, frictionless and pushed along lines
/// through its centre, the ball does not turn.
fn slides_off_where_theory_says(mut app: App, ball: Entity, pivot: Vec3, about_line: bool) {
    let (reach, v0, g) = (2.25_f32, 0.5_f32, 9.81_f32);
    set(
        &mut app,
        ball,
        (Friction::new(0.0), LinearVelocity(Vec3::X * v0)),
    );
    let leaves = (2.0 + v0 * v0 / (g * reach)) / 3.0;
    let (mut worst_on, mut cleared, mut spin) = (0.0_f32, None, 0.0_f32);
    for i in 0..(3.0 / DT) as usize {
        step(&mut app, 1);
        let mut offset = position(&app, ball) - pivot;
        if about_line {
            offset.z = 0.0;
        }
        let cos = offset.y / offset.length();
        let gap = offset.length() - reach;
        if offset.x < 0.0 {
            continue;
        }
        if cos >= leaves + 0.02 {
            worst_on = worst_on.max(gap.abs());
            spin = spin.max(angular_velocity(&app, ball).length());
        } else if cos <= 0.5 {
            cleared.get_or_insert((i, gap));
        }
    }
    println!(
        "largest gap while cos θ ≥ {:.4}: {worst_on:.2e} m; at cos θ ≤ 0.5: {cleared:?} (step, gap)",
        leaves + 0.02,
    );
    assert!(
        worst_on <= slop(),
        "left the surface by {worst_on} m before cos θ = {:.4} (slop {})",
        leaves + 0.02,
        slop()
    );
    assert!(spin <= 1e-4, "spun at {spin} rad/s");
    let (_, gap) = cleared.expect("never got past the leaving point");
    assert!(
        gap > slop(),
        "still on the surface ({gap} m) at cos θ = 0.5, theory leaves at {leaves:.4}"
    );
}

#[test]
fn a_ball_sliding_off_a_ball_follows_its_surface_and_leaves_where_theory_says() {
    // A ball (r = 0.25) set sliding over the top of a static ball (R = 2): its centre moves on
    // the circle of radius 2.25. Two curved surfaces: the manifold is recycled with its normal
    // fixed while the contact point slides less than 1 cm, so the normal lags the true one by
    // at most 1 cm / 2.25 m and the gap by 2.25 m (1 − cos(1 cm / 2.25 m)) = 0.02 mm; a normal
    // that is never renewed would leave the ball sliding on the plane tangent at the top,
    // already 0.2 m off the surface at θ = 0.4.
    let mut app = app();
    let dome = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::sphere(2.0),
            Transform::default(),
        ),
    );
    set(&mut app, dome, Friction::new(0.0));
    let ball = resting(
        &mut app,
        Collider::sphere(0.25),
        Vec3::Y * 2.25,
        Quat::IDENTITY,
    );
    slides_off_where_theory_says(app, ball, Vec3::ZERO, false);
}

#[test]
fn a_ball_sliding_over_a_box_edge_turns_about_it_and_leaves_where_theory_says() {
    // A ball (r = 2.25) slides across a static box's top face and over its edge (the line
    // x = 3, y = 1): its centre then moves on the circle of radius 2.25 about the edge, the
    // same path as over the ball above. A curved surface on an edge: the manifold is recycled
    // with its normal fixed in the box's frame while the contact point slides less than 1 cm
    // over the ball; a normal that is never renewed would carry the face's normal past the
    // edge and hold the ball up on the face's plane, 0.2 m off the circle at θ = 0.4.
    let mut app = app();
    let block = spawn(
        &mut app,
        (
            RigidBody::Static,
            Collider::cuboid(6.0, 2.0, 6.0),
            Transform::default(),
        ),
    );
    set(&mut app, block, Friction::new(0.0));
    let ball = resting(
        &mut app,
        Collider::sphere(2.25),
        Vec3::new(2.9, 3.25, 0.0),
        Quat::IDENTITY,
    );
    slides_off_where_theory_says(app, ball, Vec3::new(3.0, 1.0, 0.0), true);
}
