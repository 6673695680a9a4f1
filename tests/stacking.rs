//! Stacks stand still: a pyramid of unit cubes and a heavy box on a light one.
//!
//! Sleeping is disabled so the solver must hold the stacks itself.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// Stacking bar from the brief: every cube within 1 cm of its spawn position, i.e. two
/// contact tolerances (2 × linear_slop) of accumulated sinking or sliding.
const STACK_TOLERANCE: f32 = 0.01;

#[test]
fn pyramid_of_55_cubes_stands_for_1000_steps() {
    // Base 10, unit cubes. Rows are spaced exactly 1 m vertically (each cube spawned touching
    // the two below it, so nothing falls), with a 5 cm horizontal gap between neighbours in a
    // row: each cube then rests on exactly two cubes below and the load path is the ideal
    // pyramid's, with no side-face contacts at zero separation whose sign would depend on
    // rounding.
    const BASE: usize = 10;
    const SPACING: f32 = 1.05;
    let mut app = app();
    ground(&mut app);
    let mut cubes = Vec::new();
    for row in 0..BASE {
        let count = BASE - row;
        for i in 0..count {
            let x = (i as f32 - (count - 1) as f32 / 2.0) * SPACING;
            let p = Vec3::new(x, 0.5 + row as f32, 0.0);
            let e = spawn(
                &mut app,
                (
                    RigidBody::Dynamic,
                    Collider::cuboid(1.0, 1.0, 1.0),
                    Transform::from_translation(p),
                    SleepingDisabled,
                ),
            );
            cubes.push((e, p));
        }
    }
    assert_eq!(cubes.len(), 55);
    step(&mut app, 1000);
    let mut worst = (0.0f32, Entity::PLACEHOLDER, Vec3::ZERO);
    for &(e, start) in &cubes {
        let moved = position(&app, e).distance(start);
        if moved > worst.0 {
            worst = (moved, e, start);
        }
    }
    assert!(
        worst.0 <= STACK_TOLERANCE,
        "cube spawned at {} moved {} m (now at {})",
        worst.2,
        worst.0,
        position(&app, worst.1)
    );
    for &(e, _) in &cubes {
        // Upright: a tilt of θ lifts a cube's edge by θ × 0.5 m; bound it by the tolerance.
        let tilt = rotation(&app, e).angle_between(Quat::IDENTITY);
        assert!(tilt <= STACK_TOLERANCE / 0.5, "a cube tilted {tilt} rad");
    }
}

/// Spawns a 1 kg box on the ground and a 100 kg box on top of it, both touching.
fn heavy_on_light(app: &mut App) -> (Entity, Entity) {
    ground(app);
    let light = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Mass(1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
            SleepingDisabled,
        ),
    );
    let heavy = spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Mass(100.0),
            Transform::from_xyz(0.0, 1.5, 0.0),
            SleepingDisabled,
        ),
    );
    (light, heavy)
}

#[test]
fn heavy_box_on_light_box_stays() {
    // 100:1 mass ratio, the classic failure case of iterative solvers: the heavy box must stay
    // on, not slide off or topple, and the pair must come to rest.
    let mut app = app();
    let (light, heavy) = heavy_on_light(&mut app);
    // 8 s; watch the whole run, not just the end: a collapse and a lucky final pose fails.
    let mut heights_at_4s = (0.0, 0.0);
    for k in 0..512 {
        app.update();
        for (name, e) in [("light", light), ("heavy", heavy)] {
            let p = position(&app, e);
            let horizontal = Vec2::new(p.x, p.z).length();
            assert!(
                horizontal <= STACK_TOLERANCE,
                "step {k}: {name} box moved {horizontal} m sideways (at {p})"
            );
            // Upright: a tilt of θ moves an edge by θ × 0.5 m; bound it by the same 1 cm.
            let tilt = rotation(&app, e).angle_between(Quat::IDENTITY);
            assert!(
                tilt <= STACK_TOLERANCE / 0.5,
                "step {k}: {name} box tilted {tilt} rad"
            );
        }
        // Still on top: the heavy box's centre stays above the light box's top face.
        assert!(
            position(&app, heavy).y > position(&app, light).y + 0.5,
            "step {k}: heavy box fell"
        );
        if k == 255 {
            heights_at_4s = (position(&app, light).y, position(&app, heavy).y);
        }
    }
    for (name, e) in [("light", light), ("heavy", heavy)] {
        // At rest, same 1 mm/s bar as a single resting body.
        let v = speed(&app, e);
        assert!(v < 1e-3, "{name} box still moving at {v} m/s after 8 s");
    }
    // Stable, not slowly sinking: at < 1 mm/s for the last 4 s the heights may change by at
    // most linear_slop.
    let light_sink = heights_at_4s.0 - position(&app, light).y;
    let heavy_sink = heights_at_4s.1 - position(&app, heavy).y;
    assert!(
        light_sink.abs() <= slop(),
        "light box sank {light_sink} m between 4 s and 8 s"
    );
    assert!(
        heavy_sink.abs() <= slop(),
        "heavy box sank {heavy_sink} m between 4 s and 8 s"
    );
}

#[test]
fn heavy_box_does_not_sink_into_light_box() {
    // A soft contact is a spring of angular frequency ω acting on the contact's effective mass
    // m_eff (Catto, "Solver2D: soft step"): carrying a load F it settles at a compression of
    // F / (m_eff ω²). Here m_eff is the light box's mass (1 kg), so the heavy box's 100 kg load
    // compresses its contact by 100 g / (1 · (2π · 40 Hz)²) ≈ 1.6 cm, and the light box's
    // ground contact (static contacts are twice as stiff) by 101 g / (1 · (2π · 80 Hz)²) ≈ 4 mm.
    // The check is that the engine matches that model (within 10 %) and does not sink further.
    let mut app = app();
    let (light, heavy) = heavy_on_light(&mut app);
    step(&mut app, 256);
    let light_y = position(&app, light).y;
    let heavy_y = position(&app, heavy).y;
    let ground_penetration = 0.5 - light_y;
    let box_penetration = 1.0 - (heavy_y - light_y);
    let config = SolverConfig::default();
    let omega = 2.0 * std::f32::consts::PI * config.contact_frequency;
    let light_mass = 1.0;
    let expected_box = 100.0 * g() / (light_mass * omega * omega);
    let omega_static = omega * config.static_stiffness_factor;
    let expected_ground = 101.0 * g() / (light_mass * omega_static * omega_static);
    for (name, measured, expected) in [
        ("light/ground", ground_penetration, expected_ground),
        ("heavy/light", box_penetration, expected_box),
    ] {
        assert!(
            measured <= 1.1 * expected,
            "{name}: penetration {measured} m, soft-contact model {expected} m"
        );
    }
}

#[test]
fn tower_of_ten_cubes_stands() {
    // A vertical column: the load path is ten contacts in series.
    let mut app = app();
    ground(&mut app);
    let cubes = cube_column(&mut app, 10, SleepingDisabled);
    step(&mut app, 500);
    let mut below_top = 0.0;
    for (i, &e) in cubes.iter().enumerate() {
        let p = position(&app, e);
        // Each contact in the column may keep at most linear_slop of penetration, and none
        // may hold its cube off the one below (a gap means the column floats on contacts
        // that are not touching; 0.1 mm is f32 rounding at these heights, with margin).
        let penetration = below_top - (p.y - 0.5);
        assert!(
            (-1e-4..=slop()).contains(&penetration),
            "contact under cube {i}: penetration {penetration} m"
        );
        below_top = p.y + 0.5;
        // Nothing pushes sideways; the column stays straight within the 1 cm stacking bar.
        assert!(
            Vec2::new(p.x, p.z).length() <= STACK_TOLERANCE,
            "cube {i} at {p}"
        );
    }
    for (i, &e) in cubes.iter().enumerate() {
        // At rest, same 1 mm/s bar as a single resting body.
        let v = speed(&app, e);
        assert!(v < 1e-3, "cube {i} still moving at {v} m/s after 500 steps");
    }
}
