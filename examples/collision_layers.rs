//! Collision layers: who collides with whom.
//!
//! Four named layers (a user enum implementing [`PhysicsLayer`]): ground, players, enemies and
//! ghosts. Two colliders interact only when each one's memberships meet the other's filters:
//!
//! | body | member of | collides with |
//! | --- | --- | --- |
//! | ground | ground | players, enemies |
//! | player | players | ground, enemies |
//! | enemy | enemies | ground, players (not other enemies) |
//! | ghost | ghosts | ground |
//!
//! The ghost lists the ground, but the ground does not list ghosts, so the ghost falls through
//! it: the rule needs both sides. Two enemies are dropped one onto the other and pass through
//! each other to the ground; a player dropped onto an enemy lands on top of it.
//!
//! The example prints every collision start as it happens, then where each body ended up
//! against where free fall alone (no collisions at all) would have taken it.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example collision_layers
//! ```

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Simulated steps (2 s).
const STEPS: u32 = 128;

#[derive(Clone, Copy)]
enum Layer {
    Ground,
    Player,
    Enemy,
    Ghost,
}

impl PhysicsLayer for Layer {
    fn to_bits(&self) -> u32 {
        1 << *self as u32
    }
}

fn main() {
    use Layer::*;
    let mut app = impetus3d::headless_app(DT);
    app.add_systems(PostUpdate, print_starts);

    let world = app.world_mut();
    world.spawn((
        Name::new("ground"),
        RigidBody::Static,
        Collider::cuboid(20.0, 1.0, 20.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
        CollisionLayers::from_layers([Ground], [Player, Enemy]),
    ));
    let player = CollisionLayers::from_layers([Player], [Ground, Enemy]);
    let enemy = CollisionLayers::from_layers([Enemy], [Ground, Player]);
    let ghost = CollisionLayers::from_layers([Ghost], [Ground]);
    // (name, x, height of the centre, layers); all unit cubes.
    let cubes = [
        ("enemy A", 0.0, 0.5, enemy),
        ("enemy B", 0.0, 2.5, enemy),
        ("enemy C", 3.0, 0.5, enemy),
        ("player", 3.0, 2.5, player),
        ("ghost", -3.0, 1.5, ghost),
    ];
    let bodies: Vec<(&str, f32, Entity)> = cubes
        .into_iter()
        .map(|(name, x, y, layers)| {
            let entity = world
                .spawn((
                    Name::new(name),
                    RigidBody::Dynamic,
                    Collider::cuboid(1.0, 1.0, 1.0),
                    Transform::from_xyz(x, y, 0.0),
                    layers,
                ))
                .id();
            (name, y, entity)
        })
        .collect();

    println!("Layers: ground collides with players and enemies; players with ground and enemies;");
    println!("enemies with ground and players; ghosts list the ground, but the ground does not");
    println!("list ghosts, so they never meet.\n");
    println!("Dropping unit cubes for {STEPS} steps (ground top at y = 0):");
    for _ in 0..STEPS {
        app.update();
    }

    let t = STEPS as f32 * DT as f32;
    let g = -Gravity::default().0.y;
    println!(
        "\nAfter {t} s (free fall alone would lower each cube by {:.2} m):",
        0.5 * g * t * t
    );
    for &(name, y0, entity) in &bodies {
        let y = app.world().get::<Position>(entity).unwrap().0.y;
        let verdict = if y < -0.5 {
            "fell through everything"
        } else if y > 1.0 {
            "stopped on another cube"
        } else {
            "stopped on the ground"
        };
        println!("  {name:8} started at y = {y0:.2}, now at y = {y:7.2}: {verdict}");
    }
    // Unit cubes whose centres are closer than 0.9 m on every axis overlap deeply, far beyond
    // what a resting contact allows.
    let position = |e: Entity| app.world().get::<Position>(e).unwrap().0;
    for (i, &(a, _, ea)) in bodies.iter().enumerate() {
        for &(b, _, eb) in &bodies[i + 1..] {
            if (position(ea) - position(eb)).abs().max_element() < 0.9 {
                println!("  {a} and {b} overlap: they passed through each other");
            }
        }
    }
}

/// Prints each collision start with the step number.
fn print_starts(
    mut starts: MessageReader<CollisionStart>,
    names: Query<&Name>,
    time: Res<PhysicsStepTime>,
) {
    for start in starts.read() {
        let name = |e: Entity| names.get(e).map_or_else(|_| e.to_string(), Name::to_string);
        println!(
            "  step {:3}: {} collides with {}",
            time.step_count,
            name(start.collider1),
            name(start.collider2)
        );
    }
}
