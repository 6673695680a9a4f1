//! Physics timings on screen: [`PhysicsDiagnosticsPlugin`] records each physics step's time,
//! the time of each stage of it, the awake bodies and the touching collider pairs in Bevy's
//! `DiagnosticsStore`, and a table here reads them back every frame: the last value, the mean
//! over the store's history (the last 120 steps) and the largest in it, with a bar for each
//! stage's share of the step.
//!
//! The scene is a pile of 216 boxes, balls and capsules dropped onto the ground; space drops
//! another wave. Watch the narrow phase and the solver grow as the pile lands, and the awake
//! count fall to zero as it goes to sleep.
//!
//! ```text
//! cargo run --features examples-render --example diagnostics_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use bevy::diagnostic::{DiagnosticPath, DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Bodies along each side of a wave's cube.
const SIDE: usize = 6;
/// Width of a full bar (a stage that took the whole step), px.
const BAR_WIDTH: f32 = 160.0;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: diagnostics",
            help: "space: drop another wave of bodies",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 2.5, 0.0),
                distance: 22.0,
                yaw: 0.6,
                pitch: 0.35,
            },
        })
        .add_plugins((
            PhysicsDiagnosticsPlugin,
            FrameTimeDiagnosticsPlugin::default(),
        ))
        .add_systems(Startup, (setup, spawn_table))
        .add_systems(Update, (drop_more, update_table))
        .run();
}

/// Meshes and materials of the dropped bodies.
#[derive(Resource)]
struct Pile {
    meshes: [Handle<Mesh>; 3],
    materials: Vec<Handle<StandardMaterial>>,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 60.0);
    let pile = Pile {
        meshes: [
            meshes.add(Cuboid::new(0.8, 0.8, 0.8)),
            meshes.add(Sphere::new(0.45)),
            meshes.add(Capsule3d::new(0.3, 0.5)),
        ],
        materials: PALETTE
            .iter()
            .map(|&c| material(&mut materials, c))
            .collect(),
    };
    drop_wave(&mut commands, &pile, 0);
    commands.insert_resource(pile);
}

/// A cube of SIDE³ bodies, a little apart and jittered so they tumble when they land.
fn drop_wave(commands: &mut Commands, pile: &Pile, wave: usize) {
    let colliders = [
        Collider::cuboid(0.8, 0.8, 0.8),
        Collider::sphere(0.45),
        Collider::capsule(0.3, 0.5),
    ];
    let base = 2.0 + 8.0 * wave as f32;
    for i in 0..SIDE * SIDE * SIDE {
        let (x, y, z) = (i % SIDE, i / (SIDE * SIDE), (i / SIDE) % SIDE);
        let kind = (x + 2 * y + z + wave) % 3;
        let jitter = 0.15 * (((i * 37 + wave * 11) % 7) as f32 / 6.0 - 0.5);
        let at = Vec3::new(
            (x as f32 - (SIDE - 1) as f32 / 2.0) * 1.3 + jitter,
            base + y as f32 * 1.3,
            (z as f32 - (SIDE - 1) as f32 / 2.0) * 1.3 - jitter,
        );
        commands.spawn((
            RigidBody::Dynamic,
            colliders[kind].clone(),
            Mesh3d(pile.meshes[kind].clone()),
            MeshMaterial3d(pile.materials[(i + wave) % pile.materials.len()].clone()),
            Transform::from_translation(at).with_rotation(Quat::from_rotation_y(jitter * 4.0)),
        ));
    }
}

fn drop_more(
    mut commands: Commands,
    keys: Res<ButtonInput<KeyCode>>,
    pile: Res<Pile>,
    mut waves: Local<usize>,
) {
    if keys.just_pressed(KeyCode::Space) {
        *waves += 1;
        drop_wave(&mut commands, &pile, *waves % 3);
    }
}

/// What a row of the table shows.
enum Row {
    /// A time in ms; `bar` draws its share of the step.
    Time { path: DiagnosticPath, bar: bool },
    /// A count.
    Count(DiagnosticPath),
}

/// A row of the table: what it shows, its text and its bar.
#[derive(Component)]
struct Cells {
    label: &'static str,
    row: Row,
    text: Entity,
    bar: Entity,
}

/// The table's rows: label and what to read.
fn rows() -> Vec<(&'static str, Row)> {
    let time = |path, bar| Row::Time { path, bar };
    vec![
        ("frame", time(FrameTimeDiagnosticsPlugin::FRAME_TIME, false)),
        ("physics step", time(PhysicsDiagnostics::STEP, false)),
        ("  prepare", time(PhysicsDiagnostics::PREPARE, true)),
        ("  broad phase", time(PhysicsDiagnostics::BROAD_PHASE, true)),
        (
            "  narrow phase",
            time(PhysicsDiagnostics::NARROW_PHASE, true),
        ),
        ("  solver", time(PhysicsDiagnostics::SOLVER, true)),
        ("  sleeping", time(PhysicsDiagnostics::SLEEPING, true)),
        ("  finalize", time(PhysicsDiagnostics::FINALIZE, true)),
        (
            "  spatial query",
            time(PhysicsDiagnostics::SPATIAL_QUERY, true),
        ),
        ("awake bodies", Row::Count(PhysicsDiagnostics::AWAKE_BODIES)),
        (
            "touching pairs",
            Row::Count(PhysicsDiagnostics::TOUCHING_PAIRS),
        ),
    ]
}

/// One line of the table: the label and three values, padded to fixed widths (Bevy's default
/// font is monospaced, so the columns line up).
fn line(label: &str, values: [&str; 3]) -> String {
    let [last, mean, max] = values;
    format!("{label:<16}{last:>10}{mean:>10}{max:>10}  ")
}

/// The table, in the top-right corner: a header and one row per diagnostic, each a line of
/// text and a bar.
fn spawn_table(mut commands: Commands) {
    let text = |content: String| {
        (
            Text::new(content),
            TextFont::from_font_size(15.0),
            TextColor(Color::WHITE),
        )
    };
    let row = || Node {
        align_items: AlignItems::Center,
        ..default()
    };
    let table = commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                top: Val::Px(10.0),
                right: Val::Px(10.0),
                padding: UiRect::all(Val::Px(8.0)),
                flex_direction: FlexDirection::Column,
                row_gap: Val::Px(3.0),
                ..default()
            },
            BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.6)),
        ))
        .id();
    let header = commands
        .spawn(row())
        .with_children(|header| {
            header.spawn(text(line("", ["last", "mean", "max"])));
            header.spawn((
                text("share of the step".to_string()),
                Node {
                    width: Val::Px(BAR_WIDTH),
                    ..default()
                },
            ));
        })
        .id();
    commands.entity(table).add_child(header);
    for (label, what) in rows() {
        let line_text = commands.spawn(text(line(label, ["-"; 3]))).id();
        let bar = commands
            .spawn((
                Node {
                    width: Val::Px(0.0),
                    height: Val::Px(11.0),
                    ..default()
                },
                BackgroundColor(Color::srgb(0.95, 0.6, 0.2)),
            ))
            .id();
        let cells = Cells {
            label,
            row: what,
            text: line_text,
            bar,
        };
        let line = commands
            .spawn((row(), cells))
            .add_children(&[line_text, bar])
            .id();
        commands.entity(table).add_child(line);
    }
}

/// Reads every row's diagnostic from the store and writes its cells.
fn update_table(
    store: Res<DiagnosticsStore>,
    rows: Query<&Cells>,
    mut texts: Query<&mut Text>,
    mut nodes: Query<&mut Node>,
) {
    // The mean step time, that the bars are shares of.
    let step_mean = store
        .get(&PhysicsDiagnostics::STEP)
        .and_then(|d| d.average())
        .unwrap_or(0.0);
    for cells in &rows {
        let (path, bar, unit) = match &cells.row {
            Row::Time { path, bar } => (path, *bar, " ms"),
            Row::Count(path) => (path, false, ""),
        };
        let Some(diagnostic) = store.get(path) else {
            continue;
        };
        let format = |value: Option<f64>| match (value, unit) {
            (None, _) => "-".to_string(),
            (Some(v), "") => format!("{v:.0}"),
            (Some(v), unit) => format!("{v:.2}{unit}"),
        };
        let max = diagnostic.values().copied().reduce(f64::max);
        let values = [diagnostic.value(), diagnostic.average(), max].map(format);
        let content = line(cells.label, values.each_ref().map(String::as_str));
        if let Ok(mut text) = texts.get_mut(cells.text)
            && text.0 != content
        {
            text.0 = content;
        }
        if bar
            && step_mean > 0.0
            && let (Some(mean), Ok(mut node)) = (diagnostic.average(), nodes.get_mut(cells.bar))
        {
            node.width = Val::Px((mean / step_mean).clamp(0.0, 1.0) as f32 * BAR_WIDTH);
        }
    }
}
