//! Records every `CollisionStart` / `CollisionEnd` message with the physics step that sent it,
//! for the event and layer tests.
#![allow(dead_code)]

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Every collision message so far, with the step number it was sent in.
#[derive(Resource, Default, Debug)]
pub struct EventLog {
    pub starts: Vec<(u64, CollisionStart)>,
    pub ends: Vec<(u64, CollisionEnd)>,
}

impl EventLog {
    /// Starts between colliders `a` and `b` (either order).
    pub fn starts_between(&self, a: Entity, b: Entity) -> Vec<u64> {
        self.starts
            .iter()
            .filter(|(_, e)| between(e.collider1, e.collider2, a, b))
            .map(|(step, _)| *step)
            .collect()
    }

    /// Ends between colliders `a` and `b` (either order).
    pub fn ends_between(&self, a: Entity, b: Entity) -> Vec<u64> {
        self.ends
            .iter()
            .filter(|(_, e)| between(e.collider1, e.collider2, a, b))
            .map(|(step, _)| *step)
            .collect()
    }
}

/// Whether the pair `(c1, c2)` is `a` and `b`, in either order (the engine orders a pair's
/// colliders by creation, not by `Entity`).
fn between(c1: Entity, c2: Entity, a: Entity, b: Entity) -> bool {
    (c1, c2) == (a, b) || (c1, c2) == (b, a)
}

/// Adds an [`EventLog`] filled after every frame.
pub fn record_events(app: &mut App) {
    app.init_resource::<EventLog>()
        .add_systems(PostUpdate, record);
}

fn record(
    mut log: ResMut<EventLog>,
    mut starts: MessageReader<CollisionStart>,
    mut ends: MessageReader<CollisionEnd>,
    time: Res<PhysicsStepTime>,
) {
    let step = time.step_count;
    log.starts.extend(starts.read().map(|e| (step, *e)));
    log.ends.extend(ends.read().map(|e| (step, *e)));
}

/// The log so far.
pub fn log(app: &App) -> &EventLog {
    app.world().resource::<EventLog>()
}
