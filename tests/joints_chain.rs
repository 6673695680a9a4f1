//! Large joint assemblies: a 100-link chain (light and with a 100:1 end mass) and a 40 × 40
//! grid of spheres hanging from two corners.

use crate::common;
use crate::joints_common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

const LINKS: usize = 100;

/// Σ ½ m v² + ½ ωᵀ I ω over `bodies`, and Σ m g y, J (f64).
fn kinetic_and_potential(app: &App, bodies: &[Entity]) -> (f64, f64) {
    bodies.iter().fold((0.0, 0.0), |(k, u), &b| {
        let m = mass(app, b) as f64;
        let potential = m * g() as f64 * center_of_mass(app, b).y as f64;
        let total = mechanical_energy(app, b);
        (k + total - potential, u + potential)
    })
}

#[test]
fn hundred_link_chain_hangs_at_its_rest_length() {
    let mut app = app();
    let chain = chain(&mut app, LINKS, |_| None);
    // 20 s to settle; the stretch is taken as the worst over the last 5 s.
    let total = (20.0 / DT) as usize;
    let window = (5.0 / DT) as usize;
    let mut worst: f32 = 0.0;
    for k in 0..total {
        step(&mut app, 1);
        if k >= total - window {
            worst = worst.max(chain.stretch(&app).abs());
        }
    }
    assert!(all_bodies_finite(&mut app));
    let speed_max = chain
        .links
        .iter()
        .map(|&l| speed(&app, l))
        .fold(0.0, f32::max);
    println!(
        "chain at rest: stretch {:.4} % (worst of last 5 s {:.4} %), largest joint gap {:.4} m, \
         fastest link {speed_max:.4} m/s",
        100.0 * chain.stretch(&app),
        100.0 * worst,
        chain.max_joint_error(&app)
    );
    // The method's own sag: the chain's joints form a path, solved exactly (a Newton step of
    // the whole chain's linearized constraints per substep). For a vertical chain every
    // correction is vertical and through the balls' centres, so the constraints are linear and
    // the step closes them: no sag at all (Gauss–Seidel passes, 4 per substep, sag 0.09–0.35
    // %, swinging between the two). Left over is f32 rounding of 100 m coordinates: ½ ulp(128)
    // = 3.8e-6 m per update, a random walk of 2.7e-4 m per link over 20 s (as below), summed
    // over 100 links at random: 2.7e-3 m of length; allow 4e-3 m.
    assert!(
        worst * LINKS as f32 <= 4e-3,
        "chain sags {:.4} % at worst ({:.2} mm of 100 m)",
        100.0 * worst,
        1e3 * worst * LINKS as f32
    );
    // The brief's bound: 1 % of the 100 m length.
    assert!(
        worst < 0.01,
        "chain stretched {:.3} % at rest (length {:.3} m for 100 m)",
        100.0 * worst,
        chain.length(&app)
    );
}

#[test]
fn hundred_link_chain_with_hundredfold_end_mass_stays_bounded() {
    let mut app = app();
    // Link mass from its collider: a 0.25 m ball of density 1000, 65.45 kg.
    let link_mass = 1000.0 * 4.0 / 3.0 * std::f32::consts::PI * 0.25f32.powi(3);
    let chain = chain(&mut app, LINKS, |i| {
        (i == LINKS - 1).then_some(Mass(100.0 * link_mass))
    });
    let last = *chain.links.last().unwrap();
    // The ECS pose and mass are filled in by the first step; the energy budget starts from the
    // spawn pose (link i at y = −(i + 1), at rest).
    step(&mut app, 1);
    assert!((mass(&app, last) / mass(&app, chain.links[0]) - 100.0).abs() < 1e-3);
    let u0: f64 = chain
        .links
        .iter()
        .enumerate()
        .map(|(i, &l)| mass(&app, l) as f64 * g() as f64 * -(i as f64 + 1.0))
        .sum();
    let weight: f64 = chain
        .links
        .iter()
        .map(|&l| mass(&app, l) as f64 * g() as f64)
        .sum();
    // Energy can only come from gravity: the kinetic energy may never exceed the potential
    // energy released. Round-off allowance: positions around 100 m are rounded to ½ ulp(128)
    // = 3.8e-6 m per update; a random walk over 20 s × 256 substeps/s grows to
    // √5120 × 3.8e-6 = 2.7e-4 m; allow 1e-3 m of the whole chain's weight.
    let allowance = 1e-3 * weight;
    let mut worst_stretch: f32 = 0.0;
    let mut worst_gain = f64::NEG_INFINITY;
    for k in 1..=(20.0 / DT) as usize {
        if k > 1 {
            step(&mut app, 1);
        }
        assert!(all_bodies_finite(&mut app), "step {k}: non-finite state");
        let stretch = chain.stretch(&app);
        worst_stretch = worst_stretch.max(stretch.abs());
        // The brief's bound: bounded, under 10 %.
        assert!(
            stretch.abs() < 0.10,
            "step {k}: the chain with a 100:1 end mass stretched {:.2} %",
            100.0 * stretch
        );
        let (kinetic, potential) = kinetic_and_potential(&app, &chain.links);
        let gain = kinetic - (u0 - potential);
        worst_gain = worst_gain.max(gain);
        assert!(
            gain <= allowance,
            "step {k}: kinetic energy {kinetic:.1} J exceeds the potential energy released \
             {:.1} J by {gain:.1} J (allowance {allowance:.1} J)",
            u0 - potential
        );
    }
    let speed_max = chain
        .links
        .iter()
        .map(|&l| speed(&app, l))
        .fold(0.0, f32::max);
    println!(
        "chain with 100:1 end mass: final stretch {:.3} %, worst {:.3} %, largest joint gap \
         {:.4} m, fastest link now {speed_max:.3} m/s, worst energy gain {worst_gain:.1} J",
        100.0 * chain.stretch(&app),
        100.0 * worst_stretch,
        chain.max_joint_error(&app)
    );
}

/// The grid of the brief: `N × N` balls of radius 0.4, 1 m apart in the vertical x–y plane,
/// in no collision layer (they never collide), each joined to its right and lower neighbours
/// by spherical joints with anchors ±0.5 m; the two top corners are static.
const N: usize = 40;

#[test]
fn forty_by_forty_joint_grid_holds_together() {
    let mut app = app_with_dt(1.0 / 60.0);
    let mut balls = Vec::with_capacity(N * N);
    for row in 0..N {
        for column in 0..N {
            let corner = row == 0 && (column == 0 || column == N - 1);
            let body = if corner {
                RigidBody::Static
            } else {
                RigidBody::Dynamic
            };
            balls.push(spawn(
                &mut app,
                (
                    body,
                    Collider::sphere(0.4),
                    CollisionLayers::NONE,
                    Transform::from_xyz(column as f32, -(row as f32), 0.0),
                ),
            ));
        }
    }
    let mut joints = Vec::with_capacity(2 * N * (N - 1));
    for row in 0..N {
        for column in 0..N {
            let here = balls[row * N + column];
            if column + 1 < N {
                joints.push(spawn(
                    &mut app,
                    SphericalJoint::new(here, balls[row * N + column + 1])
                        .with_local_anchor1(Vec3::new(0.5, 0.0, 0.0))
                        .with_local_anchor2(Vec3::new(-0.5, 0.0, 0.0)),
                ));
            }
            if row + 1 < N {
                joints.push(spawn(
                    &mut app,
                    SphericalJoint::new(here, balls[(row + 1) * N + column])
                        .with_local_anchor1(Vec3::new(0.0, -0.5, 0.0))
                        .with_local_anchor2(Vec3::new(0.0, 0.5, 0.0)),
                ));
            }
        }
    }
    step(&mut app, 300);
    assert!(all_bodies_finite(&mut app), "non-finite state");
    let errors: Vec<f32> = joints
        .iter()
        .map(|&j| anchor_error::<SphericalJoint>(&app, j))
        .collect();
    let max = errors.iter().copied().fold(0.0, f32::max);
    let mean = errors.iter().sum::<f32>() / errors.len() as f32;
    let over = errors.iter().filter(|&&e| e >= 0.1).count();
    let bottom = position(&app, balls[N * N - N / 2]);
    println!(
        "grid after 300 steps: anchor error max {max:.4} m, mean {mean:.4} m, {over} of {} \
         joints at 10 cm or more; bottom-middle ball at {bottom:.3}",
        errors.len()
    );
    // The brief's bound: every joint within 10 cm.
    assert!(
        max < 0.1,
        "joint anchor errors up to {max:.3} m (mean {mean:.3} m, {over} of {} joints ≥ 10 cm)",
        errors.len()
    );
}
