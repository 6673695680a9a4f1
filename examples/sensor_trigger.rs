//! Sensors: a ball falls through a trigger zone, which reports when it enters and leaves but
//! never pushes it.
//!
//! The zone is a static [`Sensor`] box 1 m thick whose top is 2 m below the ball's bottom, and
//! below it is a solid floor. The example reads the collision messages every step and also
//! observes the zone (opted in with [`CollisionEventsEnabled`]), printing each enter and exit
//! with its step number and time. Because a sensor does not push, the ball falls freely through
//! the zone: the enter and exit times match free fall, t = sqrt(2 d / g) for a fall of d, to
//! within a step (the narrow phase sees the positions the previous step ended with). The
//! zone's [`CollidingEntities`] lists the ball only while it is inside. Finally the ball lands
//! on the solid floor, which reports a contact that stays.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example sensor_trigger
//! ```

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Simulated steps (2.5 s).
const STEPS: u64 = 160;
/// Ball radius, m.
const RADIUS: f32 = 0.25;
/// Height of the zone's top and bottom faces, m.
const ZONE_TOP: f32 = 3.0;
const ZONE_BOTTOM: f32 = 2.0;
/// Height of the ball's bottom at the start, m.
const DROP: f32 = 5.0;

fn main() {
    let mut app = impetus3d::headless_app(DT);
    app.add_systems(PostUpdate, print_messages);

    let world = app.world_mut();
    world.spawn((
        Name::new("floor"),
        RigidBody::Static,
        Collider::cuboid(10.0, 1.0, 10.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    let zone = world
        .spawn((
            Name::new("zone"),
            Collider::cuboid(4.0, ZONE_TOP - ZONE_BOTTOM, 4.0),
            Sensor,
            CollisionEventsEnabled,
            CollidingEntities::default(),
            Transform::from_xyz(0.0, 0.5 * (ZONE_TOP + ZONE_BOTTOM), 0.0),
        ))
        .observe(
            |enter: On<CollisionStart>, names: Query<&Name>, time: Res<PhysicsStepTime>| {
                // As an observed event, `collider1` is the zone itself and `collider2` the
                // visitor.
                let who = name(&names, enter.collider2);
                println!("{}: [zone observer] {who} entered", when(&time));
            },
        )
        .observe(
            |exit: On<CollisionEnd>, names: Query<&Name>, time: Res<PhysicsStepTime>| {
                let who = name(&names, exit.collider2);
                println!("{}: [zone observer] {who} left", when(&time));
            },
        )
        .id();
    let ball = world
        .spawn((
            Name::new("ball"),
            RigidBody::Dynamic,
            Collider::sphere(RADIUS),
            Transform::from_xyz(0.0, DROP + RADIUS, 0.0),
        ))
        .id();

    let g = -Gravity::default().0.y;
    let free_fall_time = |distance: f32| (2.0 * distance / g).sqrt();
    println!("A ball of radius {RADIUS} m falls from {DROP} m through a sensor zone");
    println!("between {ZONE_BOTTOM} m and {ZONE_TOP} m onto a solid floor at 0 m.");
    println!(
        "Free fall predicts: enter at t = {:.3} s, exit at t = {:.3} s, landing at t = {:.3} s.\n",
        free_fall_time(DROP - ZONE_TOP),
        free_fall_time(DROP + 2.0 * RADIUS - ZONE_BOTTOM),
        free_fall_time(DROP),
    );

    let mut inside = false;
    for _ in 0..STEPS {
        app.update();
        let now_inside = !app
            .world()
            .get::<CollidingEntities>(zone)
            .expect("the zone keeps its CollidingEntities")
            .is_empty();
        if now_inside != inside {
            inside = now_inside;
            let y = app.world().get::<Position>(ball).unwrap().0.y;
            println!(
                "  CollidingEntities of the zone: {} (ball centre at {y:.3} m)",
                if inside { "[ball]" } else { "[]" }
            );
        }
    }

    let y = app.world().get::<Position>(ball).unwrap().0.y;
    println!(
        "\nAfter {STEPS} steps the ball rests on the floor: centre at {y:.3} m (radius {RADIUS} m)."
    );
}

/// Prints this step's collision messages with the step number and time.
fn print_messages(
    mut starts: MessageReader<CollisionStart>,
    mut ends: MessageReader<CollisionEnd>,
    names: Query<&Name>,
    time: Res<PhysicsStepTime>,
) {
    for start in starts.read() {
        let (a, b) = (name(&names, start.collider1), name(&names, start.collider2));
        println!("{}: [message] {a} and {b} start touching", when(&time));
    }
    for end in ends.read() {
        let (a, b) = (name(&names, end.collider1), name(&names, end.collider2));
        println!("{}: [message] {a} and {b} stop touching", when(&time));
    }
}

/// The current step number and its end time.
fn when(time: &PhysicsStepTime) -> String {
    let step = time.step_count;
    format!("step {step:3} (t = {:.3} s)", step as f64 * DT)
}

fn name(names: &Query<&Name>, entity: Entity) -> String {
    names
        .get(entity)
        .map_or_else(|_| entity.to_string(), |n| n.to_string())
}
