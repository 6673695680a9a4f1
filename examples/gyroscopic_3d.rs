//! The Dzhanibekov effect (the tennis-racket theorem) in zero gravity: three identical
//! T-handles, each a compound of two cylinders, are set spinning at 8 rad/s about one of their
//! principal axes, with a nudge of 2 % about the others.
//!
//! - about the minor axis (the crossbar): steady;
//! - about the intermediate axis (the stem): unstable, it flips over and back again and again,
//!   its stem pointing up, then down;
//! - about the major axis (across both): steady.
//!
//! No torque acts, so each handle's angular momentum `L = I_world ω` must keep its size and
//! direction while ω wanders in the body; the readout computes it every frame from
//! [`ComputedMass::world_inertia`] and the [`AngularVelocity`], and how the axis each handle
//! was spun about lines up with it: near +1 for the steady two, swinging between +1 and -1 as
//! the middle one turns over. The coloured trails follow the tips of the stems over the last
//! seconds.
//!
//! ```text
//! cargo run --features examples-render --example gyroscopic_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use std::collections::VecDeque;

use bevy::prelude::*;
use common_3d::{
    ExamplePlugin, OrbitCamera, PALETTE, Readout, material, spawn_ground, spawn_readout,
};
use impetus3d::prelude::*;

/// Spin rate, rad/s.
const SPIN: f32 = 8.0;
/// The nudge about the other two axes, as a fraction of the spin.
const NUDGE: f32 = 0.02;
/// Crossbar and stem: radius and length, m. The stem stands on the crossbar's middle.
const BAR: (f32, f32) = (0.1, 1.6);
const STEM: (f32, f32) = (0.1, 0.8);
/// Trail points kept (frames).
const TRAIL: usize = 150;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: gyroscopic (Dzhanibekov) effect",
            help: "zero gravity; the same T-handle spun about its minor, intermediate and major axes",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 3.0, 0.0),
                distance: 10.5,
                yaw: 0.0,
                pitch: 0.2,
            },
        })
        .insert_resource(Gravity(Vec3::ZERO))
        .add_systems(Startup, setup)
        .add_systems(Update, (draw_trails, show_momentum))
        .run();
}

/// A spinning handle: which body axis it was spun about, its first |L|, and its stem tip's
/// trail.
#[derive(Component)]
struct Spinner {
    label: &'static str,
    axis: Vec3,
    first_momentum: Option<f32>,
    trail: VecDeque<Vec3>,
    colour: Color,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 40.0);
    let (bar_r, bar_len) = BAR;
    let (stem_r, stem_len) = STEM;
    let stem_at = Vec3::Y * (bar_r + stem_len / 2.0);
    // The crossbar lies along X, the stem stands along Y. Principal moments about the centre
    // of mass (at 1000 kg/m³): X (the crossbar's axis) is the smallest, Y (the stem's axis) in
    // between, Z (across both) the largest.
    let along_x = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let bar = Cylinder::new(bar_r, bar_len);
    let stem = Cylinder::new(stem_r, stem_len);
    let handle = Collider::compound(vec![
        (Vec3::ZERO, along_x, Collider::from(bar)),
        (stem_at, Quat::IDENTITY, Collider::from(stem)),
    ]);
    let bar_mesh = meshes.add(bar);
    let stem_mesh = meshes.add(stem);
    let spins = [
        ("minor axis (crossbar)", Vec3::X),
        ("intermediate axis (stem)", Vec3::Y),
        ("major axis", Vec3::Z),
    ];
    for (i, (label, axis)) in spins.into_iter().enumerate() {
        let colour = Color::from(PALETTE[[3, 0, 2][i]]);
        let paint = material(&mut materials, colour);
        // Spin about `axis` with a small nudge about the two others.
        let nudge = (Vec3::ONE - axis) * NUDGE;
        commands
            .spawn((
                Spinner {
                    label,
                    axis,
                    first_momentum: None,
                    trail: VecDeque::with_capacity(TRAIL),
                    colour,
                },
                RigidBody::Dynamic,
                handle.clone(),
                AngularVelocity((axis + nudge) * SPIN),
                // Spinning in place must never count as resting.
                SleepingDisabled,
                Transform::from_xyz(-3.5 + 3.5 * i as f32, 3.0, 0.0),
                TransformInterpolation,
                Visibility::default(),
            ))
            .with_children(|parts| {
                parts.spawn((
                    Mesh3d(bar_mesh.clone()),
                    MeshMaterial3d(paint.clone()),
                    Transform::from_rotation(along_x),
                ));
                parts.spawn((
                    Mesh3d(stem_mesh.clone()),
                    MeshMaterial3d(paint),
                    Transform::from_translation(stem_at),
                ));
            });
    }
    spawn_readout(&mut commands);
}

/// Each handle's stem tip, remembered frame by frame and drawn as a fading line.
fn draw_trails(mut handles: Query<(&mut Spinner, &Transform)>, mut gizmos: Gizmos) {
    let tip = Vec3::Y * (BAR.0 + STEM.1);
    for (mut handle, transform) in &mut handles {
        if handle.trail.len() == TRAIL {
            handle.trail.pop_front();
        }
        handle.trail.push_back(transform.transform_point(tip));
        let colour = handle.colour.to_linear();
        let count = handle.trail.len() as f32;
        let points = handle.trail.iter().enumerate().map(|(k, &p)| {
            let fade = (k as f32 + 1.0) / count;
            (p, colour.with_alpha(fade))
        });
        gizmos.linestrip_gradient(points);
    }
}

/// The readout: per handle, |L| = |I_world ω| against its first value, and how the axis it was
/// spun about lines up with L (+1 along it, -1 turned over).
fn show_momentum(
    mut handles: Query<(&mut Spinner, &ComputedMass, &Rotation, &AngularVelocity)>,
    mut readout: Query<&mut Text, With<Readout>>,
) {
    let mut text =
        String::from("angular momentum L = I_world w, kg m^2/s (no torque: it must not change)\n");
    for (mut handle, mass, rotation, omega) in &mut handles {
        let momentum = mass.world_inertia(rotation.0) * omega.0;
        let size = momentum.length();
        let first = *handle.first_momentum.get_or_insert(size);
        let along = (rotation.0 * handle.axis).dot(momentum / size);
        text += &format!(
            "{:<25} |L| {:8.4} ({:+.3} %)   spin axis . L/|L| {:+.2}\n",
            handle.label,
            size,
            100.0 * (size - first) / first,
            along,
        );
    }
    for mut readout in &mut readout {
        if readout.0 != text {
            readout.0.clone_from(&text);
        }
    }
}
