//! Level files are untrusted input. A collider whose data was tampered with in a saved RON
//! scene loads as an ignored collider, with one warning naming its entity, and the rest of the
//! level loads and simulates, its narrow phase on both compute threads with the `parallel`
//! feature. A collider in parry's internal format, which the engine once wrote and trusted,
//! is refused with an error instead of a panic.

use bevy::prelude::*;
use impetus3d::collision::collider::DisabledCollider;
use impetus3d::prelude::*;

use crate::common::ron_text::edit_list;
use crate::common::{level, *};

/// Balls per side of the grid resting on the ground: 1,089 ball–ground pairs, past the
/// narrow phase's threshold for sharing its pairs out.
const SIDE: usize = 33;
const RADIUS: f32 = 0.2;
/// Where the piece under test stands.
const PIECE_AT: Vec3 = Vec3::new(15.0, 0.5, 0.0);

/// A level: the ground, a grid of balls dropped onto it from 5 cm, the piece under test on a
/// static body above the ground beside the grid (its top at y ≈ 0.5), and four balls just
/// above the piece. The piece is what the test tampers with.
fn level(piece: Collider, piece_body: RigidBody) -> App {
    two_compute_threads();
    let mut app = app();
    app.insert_resource(ThreadUse::Parallel);
    ground(&mut app);
    for i in 0..SIDE {
        for j in 0..SIDE {
            let at = Vec3::new(0.6 * i as f32 - 10.0, RADIUS + 0.05, 0.6 * j as f32 - 10.0);
            spawn(&mut app, ball_at(at));
        }
    }
    spawn(
        &mut app,
        (piece_body, piece, Transform::from_translation(PIECE_AT)),
    );
    for (x, z) in [(14.0, -1.0), (16.0, -1.0), (14.0, 1.0), (16.0, 1.0)] {
        spawn(&mut app, ball_at(Vec3::new(x, 0.5 + RADIUS + 0.05, z)));
    }
    app
}

fn ball_at(at: Vec3) -> impl Bundle {
    (
        RigidBody::Dynamic,
        Collider::sphere(RADIUS),
        Transform::from_translation(at),
    )
}

/// Saves `original`, edits the text with `tamper`, loads it into a new app and steps it 60
/// times; returns the loaded app, the loaded piece's entity and the warnings.
fn load_tampered(
    original: &App,
    tamper: impl FnOnce(&str) -> String,
) -> (App, Entity, Vec<String>) {
    let text = tamper(&level::save(original));
    let ((app, piece), warnings) = capture_warnings(|| {
        let mut app = app();
        level::load_into(&mut app, &text).expect("the tampered level loads");
        let piece = piece(&app);
        let stages = PARALLEL_COUNTERS
            .parallel_stages
            .load(std::sync::atomic::Ordering::Relaxed);
        step(&mut app, 60);
        #[cfg(feature = "parallel")]
        assert!(
            PARALLEL_COUNTERS
                .parallel_stages
                .load(std::sync::atomic::Ordering::Relaxed)
                > stages,
            "the level's stages ran on the compute pool"
        );
        let _ = stages;
        (app, piece)
    });
    (app, piece, warnings)
}

use impetus3d::schedule::PARALLEL_COUNTERS;

/// The piece was reported once and is ignored; the level around it simulated: every body is
/// finite, the grid rests on the ground, and the balls above the ignored piece fell through
/// it onto the ground.
fn piece_ignored_and_level_simulated(app: &mut App, piece: Entity, warnings: &[String]) {
    let named = warnings
        .iter()
        .filter(|w| w.contains(&format!("{piece}")))
        .count();
    assert_eq!(named, 1, "one warning names {piece}: {warnings:?}");
    assert!(app.world().get::<DisabledCollider>(piece).is_some());
    assert!(all_bodies_finite(app));
    let world = app.world_mut();
    let mut balls = world.query::<(&Position, &Collider)>();
    let resting = balls
        .iter(world)
        .filter(|(_, c)| c.shape().as_ball().is_some())
        .filter(|(p, _)| (p.0.y - RADIUS).abs() < 0.02)
        .count();
    assert_eq!(resting, SIDE * SIDE + 4, "balls resting on the ground");
}

#[test]
fn a_triangle_mesh_indexing_past_its_vertices_is_ignored_and_the_level_loads() {
    let quad = Collider::trimesh(
        vec![
            Vec3::new(-2.0, 0.0, -2.0),
            Vec3::new(2.0, 0.0, -2.0),
            Vec3::new(-2.0, 0.0, 2.0),
            Vec3::new(2.0, 0.0, 2.0),
        ],
        vec![[0, 2, 1], [1, 2, 3]],
    );
    let original = level(quad, RigidBody::Static);
    let (mut app, piece, warnings) = load_tampered(&original, |text| {
        edit_list(text, "Trimesh(", "indices", |mut triangles| {
            triangles[1] = "(1, 2, 7)".to_string();
            triangles
        })
    });
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("triangle 1 names vertex 7"))
    );
    piece_ignored_and_level_simulated(&mut app, piece, &warnings);
}

#[test]
fn an_empty_convex_hull_is_ignored_and_its_body_keeps_a_mass() {
    let corners = (0..8).map(|k| Vec3::new((k & 1) as f32, (k >> 1 & 1) as f32, (k >> 2) as f32));
    let hull = Collider::convex_hull(corners.map(|c| 4.0 * c - 2.0).collect()).unwrap();
    let original = level(hull, RigidBody::Dynamic);
    let (mut app, piece, warnings) = load_tampered(&original, |text| {
        edit_list(text, "ConvexHull(", "points", |_| vec![])
    });
    let mass = computed_mass(&app, piece).mass();
    assert!(mass.is_finite() && mass > 0.0, "mass {mass}");
    piece_ignored_and_level_simulated(&mut app, piece, &warnings);
}

#[test]
fn a_heightfield_that_lost_samples_is_ignored_and_the_level_steps_on_both_threads() {
    let heights = vec![vec![0.0; 9]; 9];
    let field = Collider::heightfield(heights, Vec3::new(4.0, 1.0, 4.0));
    let original = level(field, RigidBody::Static);
    let (mut app, piece, warnings) = load_tampered(&original, |text| {
        edit_list(text, "Heightfield(", "heights", |mut rows| {
            rows[4] = "[0.0, 0.0]".to_string();
            rows
        })
    });
    assert!(warnings.iter().any(|w| w.contains("row 4 has 2 samples")));
    piece_ignored_and_level_simulated(&mut app, piece, &warnings);
}

/// The file of the issue that found the hole: a heightfield in parry's own format that claims
/// 400 × 400 samples and carries 4. It panicked inside the parallel narrow phase; parry's
/// internal format is no longer read, so it is now an error of the scene's deserializer.
#[test]
fn a_collider_in_parry_s_internal_format_is_refused_with_an_error() {
    let original = level(Collider::sphere(0.5), RigidBody::Static);
    let text = level::save(&original);
    let sphere =
        "\"impetus3d::collision::collider::Collider\": Sphere(\n          radius: 0.5,\n        ),";
    assert!(text.contains(sphere), "the piece's collider");
    let parry = "\"impetus3d::collision::collider::Collider\": (shape: HeightField((heights: (nrows: 400, ncols: 400, data: [0.0, 0.0, 0.0, 0.0]), status: (nrows: 1, ncols: 1, data: [(0)]), scale: (10.0, 1.0, 10.0), aabb: (mins: (-5.0, 0.0, -5.0), maxs: (5.0, 0.0, 5.0)), num_triangles: 2, flags: (0))), error: None, dropped: None),";
    let tampered = text.replace(sphere, parry);
    let error = level::read(&original, &tampered).err();
    assert!(error.is_some(), "the old format is refused");
}

/// The engine's own bookkeeping in a file is not trusted either: a body's `ComputedMass`
/// tampered to a NaN mass and an infinite inverse inertia is computed again from its collider
/// when the level loads.
#[test]
fn a_tampered_computed_mass_is_computed_again() {
    let original = level(Collider::cuboid(1.0, 1.0, 1.0), RigidBody::Dynamic);
    let expected = computed_mass(&original, piece(&original));
    let (app, piece, _) = load_tampered(&original, |text| {
        let at = text
            .find("translation: (15.0, 0.5, 0.0)")
            .expect("the piece");
        let mass = at + text[at..].find("ComputedMass\": (").expect("its mass");
        let end = mass + text[mass..].find("\n        ),").expect("its end");
        format!(
            "{}ComputedMass\": (inverse_mass: NaN, local_inverse_inertia: (inf, 0.0, 0.0, 0.0, \
             inf, 0.0, 0.0, 0.0, -inf), local_center_of_mass: (NaN, 1e30, 0.0){}",
            &text[..mass],
            &text[end..]
        )
    });
    assert_eq!(computed_mass(&app, piece), expected);
}

/// The entity of the piece under test.
fn piece(app: &App) -> Entity {
    app.world()
        .iter_entities()
        .find(|e| e.get::<Transform>().map(|t| t.translation) == Some(PIECE_AT))
        .expect("the piece")
        .id()
}
