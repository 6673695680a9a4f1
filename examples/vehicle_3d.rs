//! A car on a [`VehicleController`]: ray-cast wheels on spring–damper suspensions with
//! anti-roll bars, slip-based tyres, an engine torque curve through an automatic gearbox and
//! an open rear differential, brakes and a handbrake. The course runs over 10 cm bumps (across
//! the road, then under one side at a time) and up a 10° ramp onto a platform and down again;
//! the way back is flat.
//!
//! The wheels are meshes placed each frame from [`VehicleState`]'s wheel poses (children of
//! the chassis, which is drawn between physics steps with [`TransformInterpolation`]).
//!
//! Until a key is pressed the car drives the loop by itself. Then W / up is the throttle, S /
//! down brakes (and reverses once stopped), A / D or left / right steer, space is the handbrake.
//!
//! ```text
//! cargo run --features examples-render --example vehicle_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, Readout, material, spawn_ground, spawn_readout};
use impetus3d::prelude::*;

/// The chassis box: width, height, length, m.
const CHASSIS: Vec3 = Vec3::new(1.8, 0.5, 4.2);
/// Speed the demo driver holds, m/s.
const DEMO_SPEED: f32 = 9.0;
/// The demo loop: the course along x = 0 towards −z, back along x = 25.
const LOOP: [Vec2; 4] = [
    Vec2::new(0.0, -95.0),
    Vec2::new(25.0, -95.0),
    Vec2::new(25.0, 15.0),
    Vec2::new(0.0, 15.0),
];

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: vehicle",
            help: "W/S or up/down: throttle/brake (reverse when stopped), A/D or left/right: \
                   steer, space: handbrake\nuntil a key is pressed the car drives the loop",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 0.5, -6.0),
                distance: 14.0,
                yaw: 0.9,
                pitch: 0.35,
            },
        })
        .init_resource::<Driver>()
        .add_systems(Startup, (setup_course, setup_car))
        .add_systems(
            Update,
            (drive, place_wheels, follow_car, show_state).chain(),
        )
        .run();
}

/// Whether a key has been pressed, and the demo driver's next waypoint.
#[derive(Resource, Default)]
struct Driver {
    manual: bool,
    waypoint: usize,
}

/// A wheel mesh's parent: placed at wheel `.0`'s pose relative to the chassis.
#[derive(Component)]
struct WheelVisual(usize);

fn setup_course(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 260.0);
    let stone = material(&mut materials, Color::srgb(0.62, 0.6, 0.56));
    let mut block = |commands: &mut Commands, size: Vec3, transform: Transform| {
        commands.spawn((
            RigidBody::Static,
            Collider::cuboid(size.x, size.y, size.z),
            Mesh3d(meshes.add(Cuboid::new(size.x, size.y, size.z))),
            MeshMaterial3d(stone.clone()),
            transform,
        ));
    };
    // 10 cm bumps, 0.6 m long: across the road, under the left side, under the right side.
    for (x, width, z) in [(0.0, 6.0, -10.0), (-1.5, 3.0, -17.0), (1.5, 3.0, -23.0)] {
        block(
            &mut commands,
            Vec3::new(width, 0.1, 0.6),
            Transform::from_xyz(x, 0.05, z),
        );
    }
    // A 10° ramp up to a platform 12 m long, and down again.
    let slope = 10f32.to_radians();
    let run = 12.0;
    let rise = run * slope.tan();
    let length = run / slope.cos();
    let thickness = 0.4;
    for (z, tilt) in [
        (-32.0 - run / 2.0, slope),
        (-32.0 - 1.5 * run - 12.0, -slope),
    ] {
        let rotation = Quat::from_rotation_x(tilt);
        let centre =
            Vec3::new(0.0, rise / 2.0, z) + rotation * Vec3::new(0.0, -thickness / 2.0, 0.0);
        block(
            &mut commands,
            Vec3::new(6.0, thickness, length),
            Transform::from_translation(centre).with_rotation(rotation),
        );
    }
    block(
        &mut commands,
        Vec3::new(6.0, rise, 12.0),
        Transform::from_xyz(0.0, rise / 2.0, -32.0 - run - 6.0),
    );
    spawn_readout(&mut commands);
}

fn setup_car(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let controller = VehicleController::default();
    let body = material(&mut materials, Color::srgb(0.8, 0.2, 0.15));
    let glass = material(&mut materials, Color::srgb(0.2, 0.25, 0.3));
    let tyre = material(&mut materials, Color::srgb(0.08, 0.08, 0.08));
    let rim = material(&mut materials, Color::srgb(0.75, 0.75, 0.78));
    let wheels: Vec<(f32, f32)> = controller
        .wheels
        .iter()
        .map(|w| (w.radius, w.width))
        .collect();
    commands
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(CHASSIS.x, CHASSIS.y, CHASSIS.z),
            Mass(1_500.0),
            controller,
            TransformInterpolation,
            Transform::from_xyz(0.0, 0.75, 0.0),
            Mesh3d(meshes.add(Cuboid::new(CHASSIS.x, CHASSIS.y, CHASSIS.z))),
            MeshMaterial3d(body),
        ))
        .with_children(|car| {
            car.spawn((
                Mesh3d(meshes.add(Cuboid::new(1.6, 0.45, 2.0))),
                MeshMaterial3d(glass),
                Transform::from_xyz(0.0, 0.47, 0.3),
            ));
            for (index, (radius, width)) in wheels.into_iter().enumerate() {
                car.spawn((
                    WheelVisual(index),
                    Transform::default(),
                    Visibility::default(),
                ))
                .with_children(|wheel| {
                    // Bevy's cylinder stands along Y; the axle is the chassis's X.
                    let along_axle = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
                    wheel.spawn((
                        Mesh3d(meshes.add(Cylinder::new(radius, width))),
                        MeshMaterial3d(tyre.clone()),
                        Transform::from_rotation(along_axle),
                    ));
                    // A spoke, to see the wheel turn.
                    wheel.spawn((
                        Mesh3d(meshes.add(Cuboid::new(width + 0.02, 0.08, 1.6 * radius))),
                        MeshMaterial3d(rim.clone()),
                        Transform::default(),
                    ));
                });
            }
        });
}

/// Keys, or the demo driver until a key is pressed.
fn drive(
    keys: Res<ButtonInput<KeyCode>>,
    mut driver: ResMut<Driver>,
    mut cars: Query<(&mut VehicleInput, &VehicleState, &Transform)>,
) {
    let pressed = |codes: [KeyCode; 2]| keys.any_pressed(codes);
    let driving_keys = [
        KeyCode::KeyW,
        KeyCode::KeyS,
        KeyCode::KeyA,
        KeyCode::KeyD,
        KeyCode::ArrowUp,
        KeyCode::ArrowDown,
        KeyCode::ArrowLeft,
        KeyCode::ArrowRight,
        KeyCode::Space,
    ];
    driver.manual |= keys.any_just_pressed(driving_keys);
    for (mut input, state, transform) in &mut cars {
        let wanted = if driver.manual {
            let axis = |plus, minus| (pressed(plus) as i32 - pressed(minus) as i32) as f32;
            VehicleInput {
                throttle: axis(
                    [KeyCode::KeyW, KeyCode::ArrowUp],
                    [KeyCode::KeyS, KeyCode::ArrowDown],
                ),
                brake: 0.0,
                steering: axis(
                    [KeyCode::KeyD, KeyCode::ArrowRight],
                    [KeyCode::KeyA, KeyCode::ArrowLeft],
                ),
                handbrake: keys.pressed(KeyCode::Space) as i32 as f32,
            }
        } else {
            demo_input(&mut driver, state, transform)
        };
        if *input != wanted {
            *input = wanted;
        }
    }
}

/// Steers for the next waypoint of the loop at [`DEMO_SPEED`].
fn demo_input(driver: &mut Driver, state: &VehicleState, transform: &Transform) -> VehicleInput {
    let position = Vec2::new(transform.translation.x, transform.translation.z);
    let mut target = LOOP[driver.waypoint];
    if position.distance(target) < 6.0 {
        driver.waypoint = (driver.waypoint + 1) % LOOP.len();
        target = LOOP[driver.waypoint];
    }
    let forward = transform.forward();
    let heading = Vec2::new(forward.x, forward.z);
    let to_target = (target - position).normalize_or_zero();
    // Positive when the target is clockwise of the heading seen from above: steer right.
    let error = heading.perp_dot(to_target);
    let speed_error = DEMO_SPEED - state.forward_speed;
    VehicleInput {
        throttle: (0.3 * speed_error).clamp(0.0, 1.0),
        brake: (-0.3 * speed_error).clamp(0.0, 1.0),
        steering: (2.5 * error).clamp(-1.0, 1.0),
        handbrake: 0.0,
    }
}

/// Puts each wheel mesh where the controller says its wheel is.
fn place_wheels(
    states: Query<&VehicleState>,
    mut wheels: Query<(&WheelVisual, &ChildOf, &mut Transform)>,
) {
    for (visual, parent, mut transform) in &mut wheels {
        if let Some(wheel) = states
            .get(parent.parent())
            .ok()
            .and_then(|s| s.wheels.get(visual.0))
        {
            *transform = wheel.local_transform();
        }
    }
}

fn follow_car(
    time: Res<Time>,
    cars: Query<&Transform, (With<VehicleController>, Without<OrbitCamera>)>,
    mut cameras: Query<&mut OrbitCamera>,
) {
    let Ok(car) = cars.single() else {
        return;
    };
    for mut orbit in &mut cameras {
        let blend = 1.0 - (-4.0 * time.delta_secs()).exp();
        orbit.focus = orbit.focus.lerp(car.translation, blend);
    }
}

fn show_state(
    driver: Res<Driver>,
    cars: Query<&VehicleState>,
    mut readout: Query<&mut Text, With<Readout>>,
) {
    let (Ok(state), Ok(mut text)) = (cars.single(), readout.single_mut()) else {
        return;
    };
    let who = if driver.manual { "keys" } else { "demo driver" };
    let mut line = format!(
        "{who}: {:.0} km/h, gear {}, {:.0} rpm\n",
        state.forward_speed * 3.6,
        state.gear,
        state.engine_rpm
    );
    for (name, wheel) in ["FL", "FR", "RL", "RR"].iter().zip(&state.wheels) {
        line += &format!(
            "{name}: {} suspension {:.2} m, {:5.0} N, slip {:+.2}/{:+.2}\n",
            if wheel.in_contact {
                "on ground,"
            } else {
                "in the air,"
            },
            wheel.suspension_length,
            wheel.suspension_force,
            wheel.longitudinal_slip,
            wheel.lateral_slip,
        );
    }
    text.0 = line;
}
