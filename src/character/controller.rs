//! The [`CharacterController`] component and the system that moves characters each step.

use std::cell::RefCell;

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::query::QueryData;
use bevy::prelude::*;
use smallvec::SmallVec;

use super::slide::{
    GroundContact, MoveAndSlideConfig, MoveAndSlideOutput, Mover, Obstacles, SlideHit, Swept,
};
use crate::body::{
    AngularVelocity, ComputedMass, GravityScale, LinearVelocity, Position, RigidBody, Rotation,
    Sleeping,
};
use crate::collision::collider::ColliderPose;
use crate::collision::{Collider, ColliderOf, CollisionLayers};
use crate::math::{Scalar, Vector};
use crate::schedule::PhysicsStepTime;
use crate::settings::Gravity;
use crate::spatial_query::{SpatialQuery, SpatialQueryFilter};

/// Bodies that close on a character faster than this (m/s) are not looked for ahead; the
/// contact solver stops them against the character like against any kinematic body.
const MAX_PUSHER_SPEED: Scalar = 30.0;

/// A kinematic character moved by collide-and-slide: set [`desired_velocity`] each frame and
/// the controller walks it there, sliding along walls, up slopes and steps, falling under
/// gravity and jumping with [`CharacterControllerState::jump`]. See the
/// [module docs](crate::character) for how it moves and how it pushes and is pushed.
///
/// Put it on an entity with a [`Collider`] (a capsule, typically); the entity becomes a
/// [`RigidBody::Kinematic`] unless it already has a body kind, and must stay kinematic.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn spawn_player(mut commands: Commands) {
///     commands.spawn((
///         CharacterController::default(),
///         Collider::capsule(0.3, 1.0),
///         Transform::from_xyz(0.0, 0.81, 0.0),
///     ));
/// }
///
/// fn steer(mut players: Query<(&mut CharacterController, &mut CharacterControllerState)>) {
///     for (mut controller, mut state) in &mut players {
///         controller.desired_velocity = Vec3::new(2.0, 0.0, 0.0);
///         if state.grounded {
///             state.jump(4.0);
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(spawn_player);
/// # bevy::ecs::system::assert_is_system(steer);
/// ```
///
/// [`desired_velocity`]: CharacterController::desired_velocity
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[require(CharacterControllerState, RigidBody = RigidBody::Kinematic)]
pub struct CharacterController {
    /// The velocity the game wants, m/s, world space. Its horizontal part is walked (along
    /// the ground when on it); its part along `config.up` is added to the vertical motion
    /// (for ladders or swimming; leave it zero to walk). Default zero.
    pub desired_velocity: Vector,
    /// How the character collides, slides, steps and snaps.
    pub config: MoveAndSlideConfig,
    /// The character's mass, kg, for being pushed: a dynamic body closing on it shares its
    /// momentum as in a perfectly inelastic collision. Infinite: never pushed. Default 80.
    pub mass: Scalar,
    /// How fast the character's feet stop a push while it is on the ground, m/s² (a friction
    /// coefficient of 0.5 under 9.81 m/s² gravity). Default 4.9.
    pub push_deceleration: Scalar,
    /// Dynamic bodies heavier than this, kg, are not pushed: they block like walls. Default
    /// infinite (the character pushes any dynamic body, as a kinematic body does).
    pub max_push_mass: Scalar,
    /// Which colliders the character collides with (its own are always skipped), further
    /// limited by the `filters` of its [`CollisionLayers`]. Default: all but sensors.
    #[entities]
    pub filter: SpatialQueryFilter,
}

impl Default for CharacterController {
    fn default() -> Self {
        Self {
            desired_velocity: Vector::ZERO,
            config: MoveAndSlideConfig::default(),
            mass: 80.0,
            push_deceleration: 4.9,
            max_push_mass: Scalar::INFINITY,
            filter: SpatialQueryFilter::default(),
        }
    }
}

impl CharacterController {
    /// Why this controller cannot move its character, or `None`.
    fn validate(&self) -> Option<String> {
        if !self.desired_velocity.is_finite() {
            return Some(format!(
                "desired_velocity {} is not finite",
                self.desired_velocity
            ));
        }
        if self.mass.is_nan() || self.mass <= 0.0 {
            return Some(format!("mass {} is not positive", self.mass));
        }
        if !self.push_deceleration.is_finite() || self.push_deceleration < 0.0 {
            return Some(format!(
                "push_deceleration {} is not finite and >= 0",
                self.push_deceleration
            ));
        }
        if self.max_push_mass.is_nan() {
            return Some("max_push_mass is NaN".to_string());
        }
        self.config.validate()
    }
}

/// What a [`CharacterController`] did in the last physics step, and its vertical motion.
/// Written by the controller each step; set `vertical_speed` (or call [`Self::jump`]) to jump.
#[derive(Component, Reflect, Clone, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct CharacterControllerState {
    /// Whether the character stands on walkable ground: after every physics step, and for a new
    /// character from the `PreUpdate` after it is spawned (before its first step).
    pub grounded: bool,
    /// The normal of the ground's face under the character (zero when not grounded).
    pub ground_normal: Vector,
    /// The collider the character stands on.
    #[entities]
    pub ground_entity: Option<Entity>,
    /// Speed along `config.up`, m/s: gravity accelerates it while the character is off the
    /// ground, landing zeroes it, a ceiling stops a rise. Set it to jump.
    pub vertical_speed: Scalar,
    /// Velocity given by bodies that pushed the character, m/s (horizontal; a push upward
    /// goes into `vertical_speed`). It fades at `push_deceleration` on the ground.
    pub push_velocity: Vector,
    /// The velocity the character was given for the step (its displacement / dt), m/s.
    pub velocity: Vector,
    /// Height gained on steps in the last step, m.
    pub step_climbed: Scalar,
    /// What blocked the character in the last step.
    #[entities]
    pub hits: SmallVec<[SlideHit; 4]>,
}

impl CharacterControllerState {
    /// Leaves the ground upward at `speed` m/s (the next step starts the jump).
    pub fn jump(&mut self, speed: Scalar) {
        self.vertical_speed = speed;
        self.grounded = false;
    }
}

/// A controlled character's own components.
#[derive(QueryData)]
#[query_data(mutable)]
pub(crate) struct Character {
    entity: Entity,
    controller: &'static CharacterController,
    state: &'static mut CharacterControllerState,
    body: &'static RigidBody,
    collider: Option<Ref<'static, Collider>>,
    position: &'static mut Position,
    rotation: &'static Rotation,
    velocity: &'static mut LinearVelocity,
    layers: Option<&'static CollisionLayers>,
    gravity_scale: Option<&'static GravityScale>,
}

impl CharacterItem<'_, '_> {
    /// The character's collider, or why the character cannot move this step.
    fn usable_collider(&self) -> Result<&Ref<'_, Collider>, String> {
        if !self.body.is_kinematic() {
            return Err(format!("its RigidBody is {:?}, not Kinematic", self.body));
        }
        let Some(collider) = &self.collider else {
            return Err("it has no Collider on its own entity".to_string());
        };
        if let Some(reason) = collider.validate() {
            return Err(format!("its collider is unusable: {reason}"));
        }
        if !self.state.vertical_speed.is_finite() || !self.state.push_velocity.is_finite() {
            return Err("its state has a non-finite vertical_speed or push_velocity".to_string());
        }
        self.controller.validate().map_or(Ok(collider), Err)
    }

    /// What the character collides with: the controller's filter, limited by the `filters` of
    /// its collision layers.
    fn filter(&self) -> SpatialQueryFilter {
        let mut filter = self.controller.filter.clone();
        if let Some(layers) = self.layers {
            filter.mask &= layers.filters;
        }
        filter
    }
}

/// What the controller reads of the bodies around a character.
type BodyItem<'a> = (
    &'a RigidBody,
    &'a Position,
    &'a Rotation,
    &'a LinearVelocity,
    &'a AngularVelocity,
    &'a ComputedMass,
    Has<Sleeping>,
);

/// The other bodies and colliders, for pushing and being pushed.
type Bodies<'w, 's> = Query<'w, 's, BodyItem<'static>, Without<CharacterController>>;
type Colliders<'w, 's> = Query<
    'w,
    's,
    (
        &'static Collider,
        &'static ColliderPose,
        Option<&'static ColliderOf>,
    ),
>;

/// Each character's collider as the casts sweep it, rebuilt only when the collider changes:
/// building a capsule's core allocates, and a steady step must not.
#[derive(Default)]
pub(crate) struct SweptShapes(EntityHashMap<Swept>);

impl SweptShapes {
    fn of(&mut self, entity: Entity, collider: &Ref<Collider>) -> &Swept {
        if collider.is_changed() {
            self.0.remove(&entity);
        }
        self.0.entry(entity).or_insert_with(|| Swept::of(collider))
    }
}

/// Fills the ground of characters spawned since the last frame from the world as it stands,
/// so that `grounded` is right from the first frame, before the first physics step (which may
/// come frames later at a fixed rate). Runs in `PreUpdate` after the spatial-query tree has
/// taken in the new colliders.
pub(crate) fn find_ground_of_new_characters(
    query: SpatialQuery,
    mut characters: Query<Character, Added<CharacterControllerState>>,
) {
    for mut character in &mut characters {
        let Ok(collider) = character.usable_collider() else {
            continue; // The first step reports it.
        };
        let shape = Swept::of(collider);
        let filter = character.filter();
        let own = character.entity;
        let mover = Mover {
            query: &query,
            shape: &shape,
            rotation: character.rotation.0,
            config: &character.controller.config,
            filter: &filter,
            obstacles: &|collider: Entity, body: Option<Entity>| {
                collider != own && body != Some(own)
            },
        };
        if let Some(ground) = mover.ground_under(character.position.0) {
            character.state.grounded = true;
            character.state.ground_normal = ground.normal;
            character.state.ground_entity = Some(ground.entity);
        }
    }
}

/// Moves every character by collide-and-slide, early in the step (see the module docs).
#[allow(clippy::too_many_arguments)]
pub(crate) fn move_characters(
    mut commands: Commands,
    time: Res<PhysicsStepTime>,
    gravity: Res<Gravity>,
    query: SpatialQuery,
    mut characters: Query<Character>,
    bodies: Bodies,
    colliders: Colliders,
    mut removed: RemovedComponents<CharacterController>,
    mut shapes: Local<SweptShapes>,
    mut warned: Local<EntityHashSet>,
) {
    for gone in removed.read() {
        shapes.0.remove(&gone);
        warned.remove(&gone);
    }
    let dt = time.delta;
    if dt <= 0.0 || !dt.is_finite() {
        return;
    }
    for mut character in &mut characters {
        let entity = character.entity;
        let collider = match character.usable_collider() {
            Ok(collider) => collider,
            Err(problem) => {
                if warned.insert(entity) {
                    warn!("{entity}: character controller stays put because {problem}");
                }
                if character.body.is_kinematic() {
                    character.velocity.0 = Vector::ZERO;
                }
                continue;
            }
        };
        let shape = shapes.of(entity, collider);
        let filter = character.filter();
        let surroundings = Surroundings {
            query: &query,
            bodies: &bodies,
            colliders: &colliders,
            filter: &filter,
            config: &character.controller.config,
            own: entity,
            max_push_mass: character.controller.max_push_mass,
            woken: RefCell::new(SmallVec::new()),
        };
        let gravity_scale = character.gravity_scale.map_or(1.0, |s| s.0);
        let step = Step {
            controller: character.controller,
            shape,
            rotation: character.rotation.0,
            gravity: gravity.0 * gravity_scale,
            dt,
        };
        let moved = step.run(&surroundings, &mut character.state, character.position.0);
        for body in surroundings.woken.take() {
            commands.entity(body).try_remove::<Sleeping>();
        }
        // Leaving an overlap is a teleport; the move itself is a velocity, for the solver to
        // carry out (and push dynamic bodies with).
        character.position.0 += moved.depenetration;
        let velocity = (moved.position - character.position.0) / dt;
        character.velocity.0 = velocity;
        character.state.velocity = velocity;
    }
}

/// One character's step.
struct Step<'a> {
    controller: &'a CharacterController,
    shape: &'a Swept,
    rotation: Quat,
    gravity: Vector,
    dt: Scalar,
}

impl Step<'_> {
    /// Updates the vertical and pushed velocities, moves, and records what happened.
    fn run(
        &self,
        around: &Surroundings,
        state: &mut CharacterControllerState,
        position: Vector,
    ) -> MoveAndSlideOutput {
        let up = *self.controller.config.up;
        self.fall_and_brake(state);
        let pushed = self.pushes(around, position, self.velocity(state));
        state.vertical_speed += pushed.dot(up);
        state.push_velocity += pushed - up * pushed.dot(up);
        let mover = Mover {
            query: around.query,
            shape: self.shape,
            rotation: self.rotation,
            config: &self.controller.config,
            filter: around.filter,
            obstacles: around,
        };
        let moved = mover.run(position, self.velocity(state) * self.dt);
        self.record(state, &moved, position);
        moved
    }

    /// The velocity the character asks for: its walk, what pushed it, its vertical speed.
    fn velocity(&self, state: &CharacterControllerState) -> Vector {
        let up = *self.controller.config.up;
        self.controller.desired_velocity + state.push_velocity + up * state.vertical_speed
    }

    /// Gravity acts off the ground (on it, the ground holds the character up), and on the
    /// ground the feet brake a push as friction would.
    fn fall_and_brake(&self, state: &mut CharacterControllerState) {
        let up = *self.controller.config.up;
        if state.grounded && state.vertical_speed <= 0.0 {
            state.vertical_speed = 0.0;
        } else {
            state.vertical_speed += self.gravity.dot(up) * self.dt;
        }
        if state.grounded {
            let speed = state.push_velocity.length();
            let slowed = (speed - self.controller.push_deceleration * self.dt).max(0.0);
            state.push_velocity *= if speed > 0.0 { slowed / speed } else { 0.0 };
        }
    }

    /// Updates the state from a move: ground, vertical speed (landing, ceilings, wedging),
    /// and the push velocity's part into what blocked it.
    fn record(
        &self,
        state: &mut CharacterControllerState,
        moved: &MoveAndSlideOutput,
        position: Vector,
    ) {
        let up = *self.controller.config.up;
        let rose = (moved.position - moved.depenetration - position).dot(up);
        if state.vertical_speed > 0.0 {
            // A ceiling or a slope cuts a rise short.
            state.vertical_speed = state.vertical_speed.min((rose / self.dt).max(0.0));
        } else if rose > state.vertical_speed * self.dt * 0.01 && moved.ground.is_none() {
            // Falling but wedged: no fall speed builds up.
            state.vertical_speed = 0.0;
        }
        for hit in &moved.hits {
            let into = state.push_velocity.dot(hit.normal);
            if into < 0.0 {
                state.push_velocity -= hit.normal * into;
            }
        }
        let ground: Option<GroundContact> = moved.ground.filter(|_| state.vertical_speed <= 0.0);
        state.grounded = ground.is_some();
        state.ground_normal = ground.map_or(Vector::ZERO, |g| g.normal);
        state.ground_entity = ground.map(|g| g.entity);
        if state.grounded {
            state.vertical_speed = 0.0;
        }
        state.step_climbed = moved.step_climbed;
        state.hits = moved.hits.clone();
    }

    /// The velocity change from bodies closing on the character this step: each shares its
    /// closing speed along the contact normal in the ratio of a perfectly inelastic collision,
    /// `m_body / (m_body + m_character)` (all of it for a kinematic body).
    fn pushes(&self, around: &Surroundings, position: Vector, base: Vector) -> Vector {
        let skin = self.controller.config.skin_width;
        let reach = self.shape.cast(0.0, skin + MAX_PUSHER_SPEED * self.dt);
        let near = around.query.shape_hits_with(
            &self.shape.core,
            position,
            self.rotation,
            self.controller.config.up,
            u32::MAX,
            &reach,
            around.filter,
            &|c, b| around.includes(c, b) && b.is_some_and(|b| around.moving(b)),
        );
        let mut velocity = base;
        for hit in &near {
            let Some((body_velocity, body_mass)) = around.point_velocity(hit.entity, hit.point2)
            else {
                continue;
            };
            let normal = -hit.normal1;
            let gap = self.shape.gap(hit);
            let closing = body_velocity.dot(normal) - velocity.dot(normal);
            let reaches = closing * self.dt >= gap - skin;
            if body_velocity.dot(normal) <= 0.0 || closing <= 0.0 || !reaches {
                continue;
            }
            let share = if body_mass.is_infinite() {
                1.0
            } else {
                body_mass / (body_mass + self.controller.mass)
            };
            velocity += normal * closing * share;
        }
        velocity - base
    }
}

/// The world around one character, as the slide sees it.
struct Surroundings<'a, 'w, 's> {
    query: &'a SpatialQuery<'w, 's>,
    bodies: &'a Bodies<'w, 's>,
    colliders: &'a Colliders<'w, 's>,
    filter: &'a SpatialQueryFilter,
    config: &'a MoveAndSlideConfig,
    own: Entity,
    max_push_mass: Scalar,
    /// Sleeping bodies the character pushes, to wake.
    woken: RefCell<SmallVec<[Entity; 2]>>,
}

impl Surroundings<'_, '_, '_> {
    /// The body a collider belongs to.
    fn body_of(&self, collider: Entity) -> Option<Entity> {
        self.colliders.get(collider).ok()?.2.map(|link| link.body)
    }

    /// Whether a body moves by itself this step (awake dynamic or kinematic, with velocity).
    fn moving(&self, body: Entity) -> bool {
        self.bodies
            .get(body)
            .is_ok_and(|(rb, _, _, v, w, _, asleep)| {
                !asleep && !rb.is_static() && (v.0 != Vector::ZERO || w.0 != Vector::ZERO)
            })
    }

    /// The velocity of a collider's body at a world point, and the body's mass.
    fn point_velocity(&self, collider: Entity, point: Vector) -> Option<(Vector, Scalar)> {
        let (rb, position, rotation, v, w, mass, _) =
            self.bodies.get(self.body_of(collider)?).ok()?;
        let centre = mass.world_center_of_mass(position.0, rotation.0);
        let body_mass = if rb.is_dynamic() {
            mass.mass()
        } else {
            Scalar::INFINITY
        };
        let velocity = v.0 + w.0.cross(point - centre);
        velocity.is_finite().then_some((velocity, body_mass))
    }

    /// Whether moving a dynamic body's collider by `push` would run it into something that is
    /// not itself dynamic (a wall, the ground, a kinematic body): then it is jammed and the
    /// character must not walk into it.
    fn jammed(&self, collider: Entity, body: Entity, push: Vector) -> bool {
        let Ok((shape, local, _)) = self.colliders.get(collider) else {
            return true;
        };
        let Ok((_, position, rotation, ..)) = self.bodies.get(body) else {
            return true;
        };
        let pose = crate::math::pose(position.0, rotation.0) * local.pose();
        let own = self.own;
        let unyielding = |c: Entity, b: Option<Entity>| {
            c != collider
                && c != own
                && b != Some(body)
                && b != Some(own)
                && b.is_none_or(|b| !self.bodies.get(b).is_ok_and(|x| x.0.is_dynamic()))
        };
        let mover = Mover {
            query: self.query,
            shape: &Swept::of(shape),
            rotation: pose.rotation,
            config: self.config,
            filter: self.filter,
            obstacles: &unyielding,
        };
        mover.blocker(pose.translation, push, false).is_some()
    }
}

impl Obstacles for Surroundings<'_, '_, '_> {
    fn includes(&self, collider: Entity, body: Option<Entity>) -> bool {
        collider != self.own && body != Some(self.own)
    }

    fn yields(&self, collider: Entity, push: Option<Vector>) -> bool {
        let Some(body) = self.body_of(collider) else {
            return false;
        };
        let Ok((rb, _, _, _, _, mass, asleep)) = self.bodies.get(body) else {
            return false;
        };
        if !rb.is_dynamic() || mass.mass() > self.max_push_mass {
            return false;
        }
        let Some(push) = push else {
            return true;
        };
        if self.jammed(collider, body, push) {
            return false;
        }
        if asleep {
            self.woken.borrow_mut().push(body);
        }
        true
    }
}
