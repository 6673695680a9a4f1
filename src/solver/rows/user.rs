//! The user API: velocity constraints as components, and the generic system that gathers
//! their rows once per step.

use bevy::ecs::component::Mutable;
use bevy::ecs::entity::{EntityHashMap, EntityHashSet, MapEntities};
use bevy::prelude::*;

use super::ConstraintRow;
use super::solve::{PreparedRow, StepContext, VelocityRows};
use crate::body::CreationOrder;
use crate::body::creation::{OrderKey, order_key};
use crate::math::Scalar;
use crate::schedule::PhysicsStepTime;
use crate::settings::SolverConfig;
use crate::solver::xpbd::{ConstraintDisabled, ParticipantData, resolve};
use crate::solver::{RigidBodyQueryItem, SolverBodies};

/// A velocity-level constraint between `ENTITY_COUNT` bodies, made of [`ConstraintRow`]s.
///
/// Implement it on a component and add [`solve_velocity_constraint::<C, ENTITY_COUNT>`] to
/// [`PhysicsSchedule`](crate::PhysicsSchedule) in
/// [`SolverSet::PrepareJoints`](crate::SolverSet::PrepareJoints). Once per step the system
/// hands the constraint the impulses its rows applied in the previous step
/// ([`impulses`](Self::impulses)), then asks it for this step's rows ([`rows`](Self::rows));
/// the engine solves them with the contacts in every substep (see the
/// [module docs](crate::solver::rows)).
///
/// ```
/// use bevy::ecs::entity::{EntityMapper, MapEntities};
/// use bevy::prelude::*;
/// use impetus3d::prelude::*;
///
/// /// Lifts a body along world y at a fixed speed.
/// #[derive(Component)]
/// #[require(CreationOrder)] // solved in spawn order on every peer
/// struct Elevator {
///     body: Entity,
///     speed: f32,
/// }
///
/// impl VelocityConstraint<1> for Elevator {
///     fn entities(&self) -> [Entity; 1] {
///         [self.body]
///     }
///     fn rows(&self, _bodies: [&RigidBodyQueryItem; 1], rows: &mut RowSink) {
///         rows.add(ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO).with_velocity_target(self.speed));
///     }
/// }
///
/// impl MapEntities for Elevator {
///     fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
///         self.body = mapper.get_mapped(self.body);
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, PhysicsPlugin::default()));
/// app.add_systems(
///     PhysicsSchedule,
///     solve_velocity_constraint::<Elevator, 1>.in_set(SolverSet::PrepareJoints),
/// );
/// ```
pub trait VelocityConstraint<const ENTITY_COUNT: usize>: MapEntities {
    /// The bodies this constraint acts on, in the order [`rows`](Self::rows) receives them.
    fn entities(&self) -> [Entity; ENTITY_COUNT];

    /// Adds this step's rows. Called once per step, before the substeps, with the bodies as
    /// they are at the start of the step (static bodies have zero inverse mass).
    fn rows(&self, bodies: [&RigidBodyQueryItem; ENTITY_COUNT], rows: &mut RowSink);

    /// Receives the impulse (N·s, over the whole step) each row added in the previous step
    /// applied, in the order they were added (0 for rows that were skipped). Called once per
    /// step, just before [`rows`](Self::rows). The default ignores them.
    fn impulses(&mut self, impulses: &[Scalar]) {
        let _ = impulses;
    }
}

/// Where a [`VelocityConstraint`] puts its rows.
pub struct RowSink<'a> {
    rows: &'a mut Vec<RawRow>,
    dt: Scalar,
}

/// A row as added, with the constraint's body indices (`None`: the static world).
#[derive(Clone, Copy)]
struct RawRow {
    row: ConstraintRow,
    body0: usize,
    body1: Option<usize>,
}

impl RowSink<'_> {
    /// The length of the step, s: an impulse limit of `F · step_duration()` is a force
    /// limit of `F`.
    pub fn step_duration(&self) -> Scalar {
        self.dt
    }

    /// Adds a row between the constraint's bodies 0 and 1 (body 0 and the static world if the
    /// constraint has one body).
    pub fn add(&mut self, row: ConstraintRow) {
        self.rows.push(RawRow {
            row,
            body0: 0,
            body1: Some(1),
        });
    }

    /// Adds a row between the constraint's bodies `body0` and `body1` (`None`: the static
    /// world).
    pub fn add_between(&mut self, body0: usize, body1: Option<usize>, row: ConstraintRow) {
        self.rows.push(RawRow { row, body0, body1 });
    }
}

/// Where one constraint's rows went in the previous step.
#[derive(Clone, Copy)]
struct Block {
    entity: Entity,
    /// Range in [`VelocityConstraintCache::row_map`].
    start: u32,
    len: u32,
}

/// What [`solve_velocity_constraint`] keeps between steps: where each constraint's rows went,
/// for read-back and warm starting, and which constraints were warned about. Buffers are
/// reused, so steady-state steps allocate nothing.
#[derive(Default)]
pub struct VelocityConstraintCache {
    /// Where the last step's rows went (the state a [`PhysicsSnapshot`] keeps).
    ///
    /// [`PhysicsSnapshot`]: crate::PhysicsSnapshot
    map: RowMap,
    /// The step before's, reused as the next step's buffers.
    previous: RowMap,
    by_entity: EntityHashMap<u32>,
    /// This step's constraints in creation order (keys from `order_key`).
    order: Vec<OrderKey>,
    raw: Vec<RawRow>,
    impulses: Vec<Scalar>,
    /// Constraints warned about missing entities (managed by the slot resolver).
    warned: EntityHashSet,
    /// Constraints warned about a bad row.
    row_warned: EntityHashSet,
}

/// Where one step's rows of one constraint type went.
#[derive(Clone, Default)]
pub(crate) struct RowMap {
    step: u64,
    blocks: Vec<Block>,
    /// Per added row, its index in the step's prepared rows (`u32::MAX`: skipped).
    row_map: Vec<u32>,
}

impl RowMap {
    /// The heap memory it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        crate::math::vec_bytes(&self.blocks) + crate::math::vec_bytes(&self.row_map)
    }
}

/// The [`VelocityConstraintCache`] of every velocity-constraint type, in the order their
/// systems first ran. A resource rather than each system's `Local`, so that a
/// [`PhysicsSnapshot`](crate::PhysicsSnapshot) can capture and restore the warm-start data.
///
/// Reflected without its contents, like [`VelocityRows`]: it is the engine's working state.
#[derive(Resource, Default, Reflect)]
#[reflect(Resource, Default)]
pub struct VelocityConstraintCaches(#[reflect(ignore)] Vec<VelocityConstraintCache>);

impl VelocityConstraintCaches {
    /// Each type's row map, for a snapshot.
    pub(crate) fn row_maps(&self) -> Vec<RowMap> {
        self.0.iter().map(|cache| cache.map.clone()).collect()
    }

    /// Puts back row maps taken by [`Self::row_maps`]; types that had not run then start
    /// afresh, as they did.
    pub(crate) fn restore_row_maps(&mut self, maps: &[RowMap]) {
        for (i, cache) in self.0.iter_mut().enumerate() {
            match maps.get(i) {
                Some(map) => cache.map.clone_from(map),
                None => cache.map = RowMap::default(),
            }
        }
    }
}

/// Gathers the rows of every constraint of type `C` once per step; add it to
/// [`PhysicsSchedule`](crate::PhysicsSchedule) in
/// [`SolverSet::PrepareJoints`](crate::SolverSet::PrepareJoints).
///
/// The constraint's entities are resolved to dense solver slots as for XPBD constraints
/// (static bodies brought in with infinite mass, sleeping partners woken, constraints whose
/// bodies are all static or asleep skipped). A constraint naming a missing or non-body entity
/// or the same entity twice is skipped, and a row with non-finite values, `min_impulse >
/// max_impulse`, a negative spring or softness, or a body index the constraint does not have,
/// is skipped; each with one warning naming the constraint entity. Rows are warm started with
/// last step's impulses when the constraint adds as many rows as it did then.
#[allow(clippy::too_many_arguments)]
pub fn solve_velocity_constraint<C, const ENTITY_COUNT: usize>(
    mut constraints: Query<(Entity, Option<&CreationOrder>, &mut C), Without<ConstraintDisabled>>,
    participants: Query<ParticipantData>,
    mut solver: ResMut<SolverBodies>,
    mut rows: ResMut<VelocityRows>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
    mut caches: ResMut<VelocityConstraintCaches>,
    mut index: Local<Option<usize>>,
) where
    C: VelocityConstraint<ENTITY_COUNT> + Component<Mutability = Mutable>,
{
    let caches = &mut caches.0;
    let index = *index.get_or_insert_with(|| {
        caches.push(VelocityConstraintCache::default());
        caches.len() - 1
    });
    let Some(cache) = caches.get_mut(index) else {
        return;
    };
    let fresh = rows.last_step == cache.map.step;
    read_back(cache, &rows.last_impulses, fresh, &mut constraints);
    let step = StepContext::new(&time, &config);
    std::mem::swap(&mut cache.map, &mut cache.previous);
    cache.map.blocks.clear();
    cache.map.row_map.clear();
    cache.map.step = time.step_count;
    cache.by_entity.clear();
    if fresh {
        for (i, block) in cache.previous.blocks.iter().enumerate() {
            cache.by_entity.insert(block.entity, i as u32);
        }
    }
    // Creation order, not storage order: the rows are solved in the order they are added, and
    // the storage order changes whenever a constraint entity gains or loses a component and
    // differs between peers.
    cache.order.clear();
    (cache.order).extend(
        constraints
            .iter()
            .map(|(entity, order, _)| order_key(entity, order)),
    );
    if !cache.order.is_sorted() {
        cache.order.sort_unstable();
    }
    let rows = &mut *rows;
    for &OrderKey { entity, .. } in &cache.order {
        let Ok((_, _, constraint)) = constraints.get(entity) else {
            continue;
        };
        let Some(slots) = resolve(
            entity,
            constraint.entities(),
            &mut solver,
            &participants,
            &mut cache.warned,
            false,
        ) else {
            continue;
        };
        cache.raw.clear();
        let bodies = slots.map(|s| &solver.bodies[s]);
        constraint.rows(
            bodies,
            &mut RowSink {
                rows: &mut cache.raw,
                dt: time.delta,
            },
        );
        let warm = cache
            .by_entity
            .get(&entity)
            .map(|&i| cache.previous.blocks[i as usize])
            .filter(|b| b.len as usize == cache.raw.len());
        let start = cache.map.row_map.len() as u32;
        for (i, raw) in cache.raw.iter().enumerate() {
            let warm_impulse = warm.map_or(0.0, |b| {
                let index = cache.previous.row_map[b.start as usize + i];
                rows.last_impulses
                    .get(index as usize)
                    .copied()
                    .unwrap_or(0.0)
            });
            let index = match checked_slots(raw, &slots) {
                Err(problem) => {
                    if cache.row_warned.insert(entity) {
                        warn!(
                            "velocity constraint {entity}: row {i} has {problem}; the row is skipped"
                        );
                    }
                    u32::MAX
                }
                Ok(pair) => {
                    match PreparedRow::new(&raw.row, pair, &solver.bodies, &step, warm_impulse) {
                        Some(prepared) => {
                            rows.rows.push(prepared);
                            (rows.rows.len() - 1) as u32
                        }
                        None => u32::MAX,
                    }
                }
            };
            cache.map.row_map.push(index);
        }
        cache.map.blocks.push(Block {
            entity,
            start,
            len: cache.raw.len() as u32,
        });
    }
}

/// The dense slots of a row's two bodies, or what is wrong with the row.
fn checked_slots<const N: usize>(
    raw: &RawRow,
    slots: &[usize; N],
) -> Result<(usize, usize), &'static str> {
    if let Some(problem) = raw.row.defect() {
        return Err(problem);
    }
    let slot = |i: usize| {
        slots
            .get(i)
            .copied()
            .ok_or("a body index the constraint does not have")
    };
    let b0 = slot(raw.body0)?;
    let b1 = match raw.body1 {
        Some(i) if N > 1 || i != 1 => slot(i)?,
        // `add` on a one-body constraint: the row is against the static world.
        _ => SolverBodies::STATIC,
    };
    if b0 == b1 {
        return Err("the same body on both sides");
    }
    Ok((b0, b1))
}

/// Hands each constraint the per-step impulses of the rows it added in the previous step.
fn read_back<C, const N: usize>(
    cache: &mut VelocityConstraintCache,
    last: &[Scalar],
    fresh: bool,
    constraints: &mut Query<(Entity, Option<&CreationOrder>, &mut C), Without<ConstraintDisabled>>,
) where
    C: VelocityConstraint<N> + Component<Mutability = Mutable>,
{
    if !fresh {
        return;
    }
    for block in &cache.map.blocks {
        let Ok((_, _, mut constraint)) = constraints.get_mut(block.entity) else {
            continue;
        };
        cache.impulses.clear();
        let map = &cache.map.row_map[block.start as usize..(block.start + block.len) as usize];
        cache.impulses.extend(
            map.iter()
                .map(|&i| last.get(i as usize).copied().unwrap_or(0.0)),
        );
        // The solver's own bookkeeping: not a change for `Changed<C>` (which is how the
        // validation stage finds constraints the user changed).
        constraint
            .bypass_change_detection()
            .impulses(&cache.impulses);
    }
}
