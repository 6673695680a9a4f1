//! `Collider::heightfield`: balls rest on the field at its height under them, with the sample
//! layout (rows along Z, samples along X) and the scale as documented; bad grids are reported,
//! not a panic.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// 5 × 5 samples over 8 m × 8 m (2 m apart), height scale 2: flat at 0 for x ≤ 0 (columns 0 to
/// 2), a slope between x = 0 and x = 2, and a plateau at 0.75 × 2 = 1.5 m for x ≥ 2 (columns 3
/// and 4). Every row is the same, so the field only varies along X.
fn terrace() -> Collider {
    let row = vec![0.0, 0.0, 0.0, 0.75, 0.75];
    Collider::heightfield(vec![row; 5], Vec3::new(8.0, 2.0, 8.0))
}

/// Drops a ball of radius 0.25 at (x, 4, z) on the field (placed at `offset`) and returns
/// where it rests after 2 s.
fn rest_on_field(field: Collider, offset: Vec3, x: f32, z: f32) -> Vec3 {
    let mut app = app();
    spawn(
        &mut app,
        (
            RigidBody::Static,
            field,
            Transform::from_translation(offset),
        ),
    );
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            Transform::from_xyz(x, 4.0, z),
            SleepingDisabled,
        ),
    );
    step(&mut app, 128);
    assert!(
        speed(&app, ball) < 1e-2,
        "still moving at {}",
        speed(&app, ball)
    );
    position(&app, ball)
}

#[test]
fn ball_rests_at_the_height_of_the_field_under_it() {
    // On the plateau (x = 3 m, any z): 1.5 m + radius.
    for z in [-3.0, 0.0, 2.5] {
        let p = rest_on_field(terrace(), Vec3::ZERO, 3.0, z);
        assert!(
            (p.y - 1.75).abs() <= slop(),
            "on the plateau at z = {z}: rests at {p}"
        );
        assert!(
            (p.x - 3.0).abs() < 1e-3 && (p.z - z).abs() < 1e-3,
            "moved to {p}"
        );
    }
    // On the low flat part (x = -2 m): radius.
    let p = rest_on_field(terrace(), Vec3::ZERO, -2.0, 1.0);
    assert!((p.y - 0.25).abs() <= slop(), "on the flat: rests at {p}");
    // The field follows its body's pose: raised by 1 m and moved 10 m along Z.
    let p = rest_on_field(terrace(), Vec3::new(0.0, 1.0, 10.0), 3.0, 9.0);
    assert!(
        (p.y - 2.75).abs() <= slop(),
        "on the moved field: rests at {p}"
    );
}

#[test]
fn rows_go_along_z() {
    // The same samples with rows and columns swapped make the plateau run along +Z instead:
    // at x = 3, z = -2 the ball is on the low part.
    let mut rows = vec![vec![0.0; 5]; 5];
    rows[3] = vec![0.75; 5];
    rows[4] = vec![0.75; 5];
    let field = Collider::heightfield(rows, Vec3::new(8.0, 2.0, 8.0));
    let p = rest_on_field(field.clone(), Vec3::ZERO, 3.0, -2.0);
    assert!((p.y - 0.25).abs() <= slop(), "rests at {p}");
    let p = rest_on_field(field, Vec3::ZERO, -2.0, 3.0);
    assert!((p.y - 1.75).abs() <= slop(), "rests at {p}");
}

#[test]
fn bad_heightfields_are_reported_not_a_panic() {
    let cases = [
        (vec![vec![0.0, 1.0]], Vec3::ONE, "2 × 2"),
        (vec![vec![0.0, 1.0], vec![0.0]], Vec3::ONE, "row 1"),
        (
            vec![vec![0.0, f32::NAN], vec![0.0, 0.0]],
            Vec3::ONE,
            "finite",
        ),
        (vec![vec![0.0; 2]; 2], Vec3::new(0.0, 1.0, 1.0), "scale"),
        (
            vec![vec![0.0; 2]; 2],
            Vec3::new(1.0, f32::INFINITY, 1.0),
            "scale",
        ),
        (Vec::new(), Vec3::ONE, "2 × 2"),
    ];
    for (heights, scale, reason) in cases {
        let collider = Collider::heightfield(heights.clone(), scale);
        let problem = collider.validate();
        assert!(
            problem.as_deref().is_some_and(|p| p.contains(reason)),
            "{heights:?} at {scale}: {problem:?}"
        );
    }
    // In a world the collider is ignored with a warning naming the entity, and nothing panics.
    let (entity, warnings) = capture_warnings(|| {
        let mut app = app();
        let entity = spawn(
            &mut app,
            (
                RigidBody::Static,
                Collider::heightfield(vec![vec![1.0]], Vec3::ONE),
            ),
        );
        step(&mut app, 2);
        entity
    });
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("heightfield") && w.contains(&entity.to_string())),
        "{warnings:?}"
    );
}
