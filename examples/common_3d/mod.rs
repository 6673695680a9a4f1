//! What the windowed examples share (feature `examples-render`): a window, the physics plugin,
//! an orbit camera (drag with the right mouse button to orbit, wheel to zoom), a ground, lights,
//! an on-screen panel with the time of the last physics step and the number of bodies, and
//! helpers that spawn a body with a matching mesh.
//!
//! Screenshot mode, for `scripts/screenshots.sh`: with `IMPETUS_SCREENSHOT=path.png` set, the
//! example advances exactly 1/60 s per frame (so the picture does not depend on how fast the
//! machine renders), saves a screenshot of frame `IMPETUS_FRAMES` (default 120) and exits. If
//! the screenshot has not been written 600 frames later, it exits with an error.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use bevy::color::palettes::css;
use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::time::TimeUpdateStrategy;
use bevy::window::WindowResolution;
use impetus3d::prelude::*;

/// Everything the windowed examples share. `title` names the window; `help` is shown under the
/// step time.
pub struct ExamplePlugin {
    /// Window title.
    pub title: &'static str,
    /// What the controls do in this example, shown on screen.
    pub help: &'static str,
    /// Where the camera looks from at first: its focus, distance, yaw and pitch (radians).
    pub camera: OrbitCamera,
}

impl Plugin for ExamplePlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: self.title.to_string(),
                resolution: WindowResolution::new(1280, 720),
                ..default()
            }),
            ..default()
        }))
        .add_plugins(PhysicsPlugin::default())
        .insert_resource(ClearColor(Color::srgb(0.55, 0.65, 0.78)))
        .insert_resource(GlobalAmbientLight {
            color: Color::WHITE,
            brightness: 400.0,
            ..default()
        })
        .insert_resource(Help(self.help))
        .insert_resource(StartCamera(self.camera))
        .init_resource::<StepTimer>()
        .add_systems(Startup, (spawn_camera, spawn_lights, spawn_panel))
        .add_systems(Update, (orbit_camera, update_panel))
        .add_systems(
            PhysicsSchedule,
            (
                start_step_timer.before(PhysicsStepSet::Prepare),
                stop_step_timer.after(PhysicsStepSet::SpatialQuery),
            ),
        );
        if let Some(path) = std::env::var_os("IMPETUS_SCREENSHOT") {
            let frames = std::env::var("IMPETUS_FRAMES")
                .ok()
                .and_then(|f| f.parse().ok())
                .unwrap_or(120);
            app.insert_resource(ScreenshotPlan {
                path: path.into(),
                frame: frames,
                frames_run: 0,
            })
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
                1.0 / 60.0,
            )))
            .add_systems(Last, take_screenshot);
        }
    }
}

/// The orbit camera: it looks at `focus` from `distance` away, turned `yaw` about Y and tilted
/// down by `pitch`.
#[derive(Component, Clone, Copy, Debug)]
pub struct OrbitCamera {
    /// The point looked at.
    pub focus: Vec3,
    /// Distance from the focus, m.
    pub distance: f32,
    /// Turn about the vertical, radians.
    pub yaw: f32,
    /// Tilt down from the horizontal, radians.
    pub pitch: f32,
}

impl OrbitCamera {
    fn transform(&self) -> Transform {
        let rotation = Quat::from_euler(EulerRot::YXZ, self.yaw, -self.pitch, 0.0);
        let position = self.focus + rotation * Vec3::new(0.0, 0.0, self.distance);
        Transform::from_translation(position).looking_at(self.focus, Vec3::Y)
    }
}

/// The camera's first [`OrbitCamera`], from [`ExamplePlugin::camera`]. (A separate resource:
/// in Bevy 0.19 a type cannot derive both `Component` and `Resource`.)
#[derive(Resource)]
struct StartCamera(OrbitCamera);

fn spawn_camera(mut commands: Commands, start: Res<StartCamera>) {
    commands.spawn((Camera3d::default(), start.0.transform(), start.0));
}

/// Right-drag orbits, the wheel zooms.
fn orbit_camera(
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    scroll: Res<AccumulatedMouseScroll>,
    mut cameras: Query<(&mut OrbitCamera, &mut Transform)>,
) {
    for (mut orbit, mut transform) in &mut cameras {
        if buttons.pressed(MouseButton::Right) {
            orbit.yaw -= motion.delta.x * 0.005;
            orbit.pitch = (orbit.pitch + motion.delta.y * 0.005).clamp(-0.2, 1.5);
        }
        let lines = match scroll.unit {
            MouseScrollUnit::Line => scroll.delta.y,
            MouseScrollUnit::Pixel => scroll.delta.y / 40.0,
        };
        orbit.distance = (orbit.distance * (1.0 - 0.1 * lines)).clamp(2.0, 200.0);
        let wanted = orbit.transform();
        if *transform != wanted {
            *transform = wanted;
        }
    }
}

fn spawn_lights(mut commands: Commands) {
    commands.spawn((
        DirectionalLight {
            illuminance: 8000.0,
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(8.0, 20.0, 12.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}

/// A static ground whose top is at y = 0: `size` m square, with a mesh.
pub fn spawn_ground(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    materials: &mut Assets<StandardMaterial>,
    size: f32,
) -> Entity {
    commands
        .spawn((
            RigidBody::Static,
            Collider::cuboid(size, 1.0, size),
            Mesh3d(meshes.add(Cuboid::new(size, 1.0, size))),
            MeshMaterial3d(materials.add(StandardMaterial {
                base_color: Color::srgb(0.35, 0.42, 0.32),
                perceptual_roughness: 0.9,
                ..default()
            })),
            Transform::from_xyz(0.0, -0.5, 0.0),
        ))
        .id()
}

/// A plain coloured material.
pub fn material(
    materials: &mut Assets<StandardMaterial>,
    color: impl Into<Color>,
) -> Handle<StandardMaterial> {
    materials.add(StandardMaterial {
        base_color: color.into(),
        perceptual_roughness: 0.6,
        ..default()
    })
}

/// A palette for telling bodies apart.
pub const PALETTE: [Srgba; 6] = [
    css::TOMATO,
    css::GOLD,
    css::MEDIUM_SEA_GREEN,
    css::DODGER_BLUE,
    css::ORCHID,
    css::SANDY_BROWN,
];

/// The text panel in the top-left corner.
#[derive(Component)]
struct Panel;

/// This example's help line.
#[derive(Resource)]
struct Help(&'static str);

fn spawn_panel(mut commands: Commands) {
    commands.spawn((
        Panel,
        Text::new(""),
        TextFont::from_font_size(16.0),
        TextColor(Color::WHITE),
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(10.0),
            left: Val::Px(10.0),
            padding: UiRect::all(Val::Px(8.0)),
            ..default()
        },
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.55)),
    ));
}

/// A second text panel, in the bottom-left corner, for an example's own readout: spawn it with
/// [`spawn_readout`] and write its `Text`.
#[derive(Component)]
pub struct Readout;

/// Spawns the [`Readout`] panel, empty.
pub fn spawn_readout(commands: &mut Commands) -> Entity {
    commands
        .spawn((
            Readout,
            Text::new(""),
            TextFont::from_font_size(16.0),
            TextColor(Color::WHITE),
            Node {
                position_type: PositionType::Absolute,
                bottom: Val::Px(10.0),
                left: Val::Px(10.0),
                padding: UiRect::all(Val::Px(8.0)),
                ..default()
            },
            BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.55)),
        ))
        .id()
}

/// Wall-clock time of the physics steps: the last one, and an average over about a second.
#[derive(Resource, Default)]
struct StepTimer {
    started: Option<Instant>,
    last: Duration,
    window: Duration,
    window_steps: u32,
    average: Duration,
}

fn start_step_timer(mut timer: ResMut<StepTimer>) {
    timer.started = Some(Instant::now());
}

fn stop_step_timer(mut timer: ResMut<StepTimer>) {
    let Some(started) = timer.started.take() else {
        return;
    };
    let elapsed = started.elapsed();
    timer.last = elapsed;
    timer.window += elapsed;
    timer.window_steps += 1;
    if timer.window_steps >= 64 {
        timer.average = timer.window / timer.window_steps;
        timer.window = Duration::ZERO;
        timer.window_steps = 0;
    }
}

fn update_panel(
    timer: Res<StepTimer>,
    help: Res<Help>,
    steps: Res<PhysicsStepTime>,
    bodies: Query<(&RigidBody, Has<Sleeping>)>,
    mut panel: Query<&mut Text, With<Panel>>,
) {
    let (mut dynamic, mut asleep) = (0, 0);
    for (body, sleeping) in &bodies {
        if body.is_dynamic() {
            dynamic += 1;
            asleep += usize::from(sleeping);
        }
    }
    let average = if timer.average.is_zero() {
        timer.last
    } else {
        timer.average
    };
    let text = format!(
        "physics step: {:.2} ms (last {:.2} ms), {} substeps at {:.0} Hz\n\
         dynamic bodies: {dynamic} ({asleep} asleep), steps run: {}\n\
         right-drag: orbit, wheel: zoom\n{}",
        average.as_secs_f64() * 1000.0,
        timer.last.as_secs_f64() * 1000.0,
        steps.substeps,
        if steps.delta > 0.0 {
            1.0 / steps.delta
        } else {
            0.0
        },
        steps.step_count,
        help.0,
    );
    for mut panel in &mut panel {
        if panel.0 != text {
            panel.0.clone_from(&text);
        }
    }
}

/// Screenshot mode: where to save, which frame, and how many frames have run.
#[derive(Resource)]
struct ScreenshotPlan {
    path: std::path::PathBuf,
    frame: u32,
    frames_run: u32,
}

/// True in screenshot mode (`IMPETUS_SCREENSHOT` set): examples may script what a user would
/// do with the mouse.
pub fn screenshot_mode() -> bool {
    std::env::var_os("IMPETUS_SCREENSHOT").is_some()
}

fn take_screenshot(
    mut commands: Commands,
    mut plan: ResMut<ScreenshotPlan>,
    mut exit: MessageWriter<AppExit>,
) {
    plan.frames_run += 1;
    if plan.frames_run == plan.frame {
        commands
            .spawn(Screenshot::primary_window())
            .observe(save_to_disk(plan.path.clone()))
            .observe(
                |_: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                    exit.write(AppExit::Success);
                },
            );
    }
    if plan.frames_run > plan.frame + 600 {
        error!("no screenshot 600 frames after asking for one");
        exit.write(AppExit::error());
    }
}

/// The ray from the camera through the cursor, if the cursor is in the window.
pub fn cursor_ray(
    window: &Window,
    camera: &Camera,
    camera_transform: &GlobalTransform,
) -> Option<Ray3d> {
    let cursor = window.cursor_position()?;
    camera.viewport_to_world(camera_transform, cursor).ok()
}
