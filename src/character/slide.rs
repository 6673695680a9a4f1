//! Collide-and-slide: move a shape through the world by a displacement, stopping a skin width
//! short of what it hits and sliding the rest of the way along it; walk on ground, up steps and
//! slopes, never up steep ones. See the [module docs](super) for the method and its sources.

use bevy::ecs::entity::MapEntities;
use bevy::prelude::*;
use parry3d::shape::SharedShape;
use smallvec::SmallVec;

use crate::collision::Collider;
use crate::math::{Quaternion, Scalar, Vector, is_finite_quat};
use crate::spatial_query::{ShapeCastConfig, ShapeHitData, SpatialQuery, SpatialQueryFilter};
use crate::validation::MAX_SLIDE_ITERATIONS;

/// A hit closer than this along the cast counts as touching at the start (parry's own
/// threshold for "penetrating or within target distance at time 0").
const AT_ORIGIN: Scalar = 1e-5;
/// A motion whose direction has `dir · n >= -PARALLEL` against a surface it already touches
/// runs along it or away from it: that surface does not block (0.06° of slack for round-off).
const PARALLEL: Scalar = 1e-3;
/// Motions shorter than this are not cast, m.
const MIN_MOVE: Scalar = 1e-6;
/// The back-off along the motion keeps a gap of a skin width along the normal, but never
/// backs off more than `skin / MIN_APPROACH` for grazing hits.
const MIN_APPROACH: Scalar = 0.2;
/// How many colliders one cast may skip (touched and moved away from, or pushed aside) before
/// the next is taken as blocking, to keep a cast bounded.
const MAX_SKIPS: usize = 4;
/// Height above a ground contact from which a ray reads the face's normal, m.
const NORMAL_PROBE: Scalar = 2e-3;
/// How far that ray starts inward from the contact (times the normal's horizontal part), m,
/// so that on an edge it reads the face the character stands on.
const NORMAL_NUDGE: Scalar = 1e-3;
/// Depenetration rounds per move.
const DEPENETRATION_ROUNDS: usize = 4;

/// A shape as the casts sweep it: a core and a radius around it (a target distance).
///
/// A capsule is swept as its core segment inflated by its radius: parry's GJK on the
/// capsule's rounded support map converges only to about 1e-3 m against large boxes (casts
/// stop up to 4.6e-3 m short or 5.6e-4 m past the contact), while segment-against-polytope
/// distances are exact to f32 round-off, so the cast's refinement lands on the contact.
#[derive(Clone, Debug)]
pub(crate) struct Swept {
    pub core: Collider,
    pub radius: Scalar,
}

impl Swept {
    pub(crate) fn of(collider: &Collider) -> Self {
        match collider.shape().as_capsule() {
            Some(c) if c.half_height() > 1e-6 && c.radius > 0.0 => Self {
                core: SharedShape::segment(c.segment.a, c.segment.b).into(),
                radius: c.radius,
            },
            _ => Self {
                core: collider.clone(),
                radius: 0.0,
            },
        }
    }

    /// Cast settings reaching `max_distance`, touching at `gap` from the outer surface.
    pub(crate) fn cast(&self, max_distance: Scalar, gap: Scalar) -> ShapeCastConfig {
        ShapeCastConfig {
            max_distance,
            target_distance: self.radius + gap,
            ..default()
        }
    }

    /// The gap between the outer surface and the collider in a hit (negative: overlap).
    pub(crate) fn gap(&self, hit: &ShapeHitData) -> Scalar {
        (hit.point2 - hit.point1).dot(hit.normal1) - self.radius
    }
}

/// How [`move_and_slide`] moves a shape.
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct MoveAndSlideConfig {
    /// The world's up direction: ground is below, steps are climbed along it. Default +Y.
    pub up: Dir3,
    /// Gap kept between the shape and what it touches, m. Every cast stops this far short of
    /// a surface (measured along its normal). Default 0.01.
    pub skin_width: Scalar,
    /// Steepest ground the shape can stand on and walk up, radians from horizontal (the
    /// `slopeLimit` of Unity's and PhysX's character controllers). Steeper surfaces are
    /// walls: the shape slides down them and never up. Default 45°.
    pub max_slope_angle: Scalar,
    /// Highest ledge the shape steps onto while on the ground, m (PhysX's `stepOffset`).
    /// 0 turns stepping off. Default 0.3.
    pub step_height: Scalar,
    /// How far below the shape ground is looked for after a move on the ground, to stay on
    /// it when walking down slopes and small steps, m. 0 turns snapping off. Default 0.2.
    pub snap_distance: Scalar,
    /// Casts per move: each one slides along one more surface. Default 4; a count above
    /// [`MAX_SLIDE_ITERATIONS`](crate::validation::MAX_SLIDE_ITERATIONS) is used as that.
    pub max_iterations: u32,
}

impl Default for MoveAndSlideConfig {
    fn default() -> Self {
        Self {
            up: Dir3::Y,
            skin_width: 0.01,
            max_slope_angle: 45f32.to_radians(),
            step_height: 0.3,
            snap_distance: 0.2,
            max_iterations: 4,
        }
    }
}

impl MoveAndSlideConfig {
    /// Why this configuration cannot be used, or `None` if it is valid.
    pub fn validate(&self) -> Option<String> {
        let lengths = [
            ("skin_width", self.skin_width),
            ("step_height", self.step_height),
            ("snap_distance", self.snap_distance),
        ];
        if let Some((name, value)) = lengths
            .into_iter()
            .find(|(_, v)| !v.is_finite() || *v < 0.0)
        {
            return Some(format!("{name} is {value}, not a finite length >= 0"));
        }
        let angle = self.max_slope_angle;
        if !(0.0..=std::f32::consts::FRAC_PI_2).contains(&angle) {
            return Some(format!("max_slope_angle is {angle}, not in [0, pi/2]"));
        }
        if !self.up.is_finite() {
            return Some("up is not finite".to_string());
        }
        None
    }

    /// Whether a surface with this normal is ground the shape can stand on.
    pub fn is_walkable(&self, normal: Vector) -> bool {
        normal.dot(*self.up) >= crate::math::cos(self.max_slope_angle) - 1e-6
    }

    /// The back-off along a motion direction `dir` that leaves a skin width of gap along the
    /// normal `normal` of the surface hit.
    fn back_off(&self, dir: Vector, normal: Vector) -> Scalar {
        self.skin_width / (-dir.dot(normal)).max(MIN_APPROACH)
    }
}

/// An obstacle that blocked a move.
#[derive(Clone, Reflect, Copy, Debug, PartialEq, MapEntities)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SlideHit {
    /// The collider hit.
    #[entities]
    pub entity: Entity,
    /// The touching point on the collider, world space.
    pub point: Vector,
    /// The contact normal, pointing from the collider towards the moving shape.
    pub normal: Vector,
}

/// Walkable ground under the shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundContact {
    /// The ground's collider.
    pub entity: Entity,
    /// Where the shape rests on it, world space.
    pub point: Vector,
    /// The normal of the ground's face there (on an edge, of the face the shape stands on).
    pub normal: Vector,
}

/// What [`move_and_slide`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveAndSlideOutput {
    /// Where the shape ended.
    pub position: Vector,
    /// How far the shape was pushed out of colliders it overlapped at the start (included in
    /// `position`, not a part of the requested displacement).
    pub depenetration: Vector,
    /// The walkable ground under the shape at the end, if it stands on any (never while the
    /// displacement rises: a jump leaves the ground).
    pub ground: Option<GroundContact>,
    /// The obstacles that blocked the motion, in the order met.
    pub hits: SmallVec<[SlideHit; 4]>,
    /// Height gained by stepping up ledges, m.
    pub step_climbed: Scalar,
}

impl MoveAndSlideOutput {
    /// `velocity` with what would drive the shape into the surfaces this move met taken
    /// out: for each obstacle in the order met, and then the ground, the part along its
    /// normal into it is removed. Keep it as the next frame's velocity so that pressing into
    /// a wall does not build up speed the wall then has to cancel.
    pub fn projected_velocity(&self, velocity: Vector) -> Vector {
        let normals = self.hits.iter().map(|hit| hit.normal);
        let ground = self.ground.iter().map(|ground| ground.normal);
        normals
            .chain(ground)
            .fold(velocity, |v, normal| v - v.dot(normal).min(0.0) * normal)
    }

    fn at(position: Vector) -> Self {
        Self {
            position,
            depenetration: Vector::ZERO,
            ground: None,
            hits: SmallVec::new(),
            step_climbed: 0.0,
        }
    }
}

/// Moves `shape`, at `position` with `rotation`, by `displacement` through the colliders that
/// `filter` accepts, and returns where it ends up; the world itself is not changed.
///
/// The shape first leaves any collider it overlaps, then travels until it comes within a skin
/// width of a surface and slides along it with what is left of the motion, up to
/// `config.max_iterations` times. On walkable ground (found under the shape at the start,
/// unless the displacement rises) the motion keeps its horizontal part and follows the ground,
/// ledges up to `config.step_height` are stepped onto, and the shape is snapped down onto
/// ground within `config.snap_distance` after the move. Surfaces steeper than
/// `config.max_slope_angle` are never climbed.
///
/// Exclude the shape's own body in `filter`. Invalid input (non-finite values, an invalid
/// collider or configuration) leaves the shape where it is.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// #[derive(Component)]
/// struct Player;
///
/// fn walk(query: SpatialQuery, mut players: Query<(Entity, &Collider, &mut Position), With<Player>>) {
///     let config = MoveAndSlideConfig::default();
///     for (entity, collider, mut position) in &mut players {
///         let filter = SpatialQueryFilter::default().with_excluded_entities([entity]);
///         let step = Vec3::new(0.05, -0.02, 0.0);
///         let out = move_and_slide(&query, collider, position.0, Quat::IDENTITY, step, &config, &filter);
///         position.0 = out.position;
///     }
/// }
/// # bevy::ecs::system::assert_is_system(walk);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn move_and_slide(
    query: &SpatialQuery,
    shape: &Collider,
    position: Vector,
    rotation: Quaternion,
    displacement: Vector,
    config: &MoveAndSlideConfig,
    filter: &SpatialQueryFilter,
) -> MoveAndSlideOutput {
    Mover {
        query,
        shape: &Swept::of(shape),
        rotation,
        config,
        filter,
        obstacles: &|_, _| true,
    }
    .run(position, displacement)
}

/// [`move_and_slide`] as a system parameter, for systems that move shapes of their own.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// #[derive(Component)]
/// struct Player;
///
/// fn walk(
///     slide: MoveAndSlide,
///     time: Res<Time>,
///     mut players: Query<(Entity, &Collider, &mut Position, &mut LinearVelocity), With<Player>>,
/// ) {
///     let config = MoveAndSlideConfig::default();
///     for (entity, collider, mut position, mut velocity) in &mut players {
///         let filter = SpatialQueryFilter::from_excluded_entities([entity]);
///         let step = velocity.0 * time.delta_secs();
///         let out = slide.move_and_slide(collider, position.0, Quat::IDENTITY, step, &config, &filter);
///         position.0 = out.position;
///         velocity.0 = out.projected_velocity(velocity.0);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(walk);
/// ```
#[derive(bevy::ecs::system::SystemParam)]
pub struct MoveAndSlide<'w, 's> {
    query: SpatialQuery<'w, 's>,
}

impl MoveAndSlide<'_, '_> {
    /// Moves `shape` by `displacement`: see [`move_and_slide`].
    pub fn move_and_slide(
        &self,
        shape: &Collider,
        position: Vector,
        rotation: Quaternion,
        displacement: Vector,
        config: &MoveAndSlideConfig,
        filter: &SpatialQueryFilter,
    ) -> MoveAndSlideOutput {
        move_and_slide(
            &self.query,
            shape,
            position,
            rotation,
            displacement,
            config,
            filter,
        )
    }

    /// The spatial queries it moves through, for the casts a controller makes besides.
    pub fn spatial_query(&self) -> &SpatialQuery<'_, '_> {
        &self.query
    }
}

/// Which colliders a move collides with, and which it may push into.
pub(crate) trait Obstacles {
    /// Whether the shape collides with this collider at all (its own are excluded here).
    fn includes(&self, collider: Entity, body: Option<Entity>) -> bool;

    /// Whether the shape may move into this collider: a body the contact solver will push
    /// out of the way. `push` is how far the shape would move into it; `None` asks whether
    /// overlaps with it are left to the solver.
    fn yields(&self, _collider: Entity, _push: Option<Vector>) -> bool {
        false
    }
}

/// A predicate on (collider, body) is the set of obstacles it accepts, none of which yield.
impl<F: Fn(Entity, Option<Entity>) -> bool> Obstacles for F {
    fn includes(&self, collider: Entity, body: Option<Entity>) -> bool {
        self(collider, body)
    }
}

/// A surface that stops a motion.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocker {
    pub hit: ShapeHitData,
    /// Contact normal, from the surface towards the moving shape.
    pub normal: Vector,
    /// How far the shape may travel before it is a skin width from the surface.
    pub travel: Scalar,
}

/// One move of one shape through the world.
pub(crate) struct Mover<'a, 'w, 's> {
    pub query: &'a SpatialQuery<'w, 's>,
    pub shape: &'a Swept,
    pub rotation: Quaternion,
    pub config: &'a MoveAndSlideConfig,
    pub filter: &'a SpatialQueryFilter,
    pub obstacles: &'a dyn Obstacles,
}

impl Mover<'_, '_, '_> {
    /// Depenetrates, slides, steps and snaps; see [`move_and_slide`].
    pub(crate) fn run(&self, position: Vector, displacement: Vector) -> MoveAndSlideOutput {
        let mut out = MoveAndSlideOutput::at(position);
        let valid = position.is_finite()
            && displacement.is_finite()
            && is_finite_quat(self.rotation)
            && self.shape.core.validate().is_none()
            && self.config.validate().is_none();
        if !valid {
            return out;
        }
        let up = *self.config.up;
        let start = self.depenetrate(position);
        out.depenetration = start - position;
        let lifting = displacement.dot(up) > MIN_MOVE;
        let ground = (!lifting).then(|| self.ground_under(start)).flatten();
        let motion = match ground {
            Some(g) => along_ground(displacement, g.normal, up),
            None => displacement,
        };
        let mut end = self.slide(start, motion, ground, &mut out);
        if ground.is_some() {
            end = self.snap(end);
        }
        out.position = end;
        out.ground = (!lifting).then(|| self.ground_under(end)).flatten();
        out
    }

    /// The first collider that stops the shape moving by `motion` from `from`, within the
    /// motion plus a back-off. Colliders already touched that the motion runs along or away
    /// from do not stop it, nor (with `pushing`) bodies that yield to the push; after
    /// [`MAX_SKIPS`] such colliders the next one is taken as blocking, so the result errs on
    /// the safe side.
    pub(crate) fn blocker(&self, from: Vector, motion: Vector, pushing: bool) -> Option<Blocker> {
        let length = motion.length();
        if length < MIN_MOVE {
            return None;
        }
        let dir = Dir3::new(motion / length).ok()?;
        let cast = self
            .shape
            .cast(length + self.config.skin_width / MIN_APPROACH, 0.0);
        let mut skipped: SmallVec<[Entity; MAX_SKIPS]> = SmallVec::new();
        loop {
            let hit = self.query.cast_shape_with(
                &self.shape.core,
                from,
                self.rotation,
                dir,
                &cast,
                self.filter,
                &|c, b| self.obstacles.includes(c, b) && !skipped.contains(&c),
            )?;
            let normal = (-hit.normal1).try_normalize().unwrap_or(-*dir);
            let touching_only = hit.distance <= AT_ORIGIN && dir.dot(normal) >= -PARALLEL;
            let passes = touching_only
                || pushing
                    && self
                        .obstacles
                        .yields(hit.entity, Some(*dir * (length - hit.distance)));
            if passes && skipped.len() < MAX_SKIPS {
                skipped.push(hit.entity);
                continue;
            }
            let travel = hit.distance - self.config.back_off(*dir, normal);
            // Beyond the end of the motion (within the back-off), nothing blocks.
            return (travel < length).then_some(Blocker {
                hit,
                normal,
                travel: travel.max(0.0),
            });
        }
    }

    /// How far the shape can move along `motion` (at most its length) before a skin width
    /// from what blocks it.
    fn free_travel(&self, from: Vector, motion: Vector) -> Scalar {
        self.blocker(from, motion, true)
            .map_or(motion.length(), |b| b.travel)
    }

    /// Pushes the shape out of the colliders it overlaps (except those that yield, which the
    /// contact solver pushes away), deepest first, to a skin width of gap.
    fn depenetrate(&self, mut position: Vector) -> Vector {
        let at_rest = self.shape.cast(0.0, 0.0);
        for _ in 0..DEPENETRATION_ROUNDS {
            let hits = self.query.shape_hits_with(
                &self.shape.core,
                position,
                self.rotation,
                self.config.up,
                u32::MAX,
                &at_rest,
                self.filter,
                &|c, b| self.obstacles.includes(c, b) && !self.obstacles.yields(c, None),
            );
            let deepest = hits
                .iter()
                .map(|h| (h, -self.shape.gap(h)))
                .filter(|(h, depth)| *depth > 0.0 && h.normal1.is_finite())
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let Some((hit, depth)) = deepest else {
                break;
            };
            position -= hit.normal1.normalize_or_zero() * (depth + self.config.skin_width);
        }
        position
    }

    /// Collide-and-slide from `start` by `motion`: travel to the first blocker, step up it or
    /// slide along it, repeat.
    fn slide(
        &self,
        start: Vector,
        motion: Vector,
        ground: Option<GroundContact>,
        out: &mut MoveAndSlideOutput,
    ) -> Vector {
        let mut position = start;
        let mut remaining = motion;
        let mut planes: SmallVec<[Vector; 8]> = ground.iter().map(|g| g.normal).collect();
        for _ in 0..self.config.max_iterations.min(MAX_SLIDE_ITERATIONS) {
            if remaining.length() < MIN_MOVE {
                break;
            }
            let Some(block) = self.blocker(position, remaining, true) else {
                return position + remaining;
            };
            let dir = remaining.normalize();
            position += dir * block.travel;
            remaining -= dir * block.travel;
            out.hits.push(SlideHit {
                entity: block.hit.entity,
                point: block.hit.point2,
                normal: block.normal,
            });
            if let Some(ground) = ground
                && !self.config.is_walkable(block.normal)
                && let Some((landed, rest, climbed)) = self.step_up(position, remaining, ground)
            {
                out.step_climbed += climbed;
                position = landed;
                remaining = rest;
                continue;
            }
            remaining = self.clip(remaining, block.normal, &mut planes);
        }
        position
    }

    /// What is left of a motion after it meets a surface with normal `normal`: on walkable
    /// ground the horizontal part follows the surface; elsewhere the part into the surface is
    /// removed, except that a steep surface is never climbed (it acts as a vertical wall).
    /// When the result runs into a surface met earlier in the move, it follows the crease
    /// between the two, or stops in a corner of three (Quake's `PM_SlideMove` rule).
    fn clip(
        &self,
        remaining: Vector,
        normal: Vector,
        planes: &mut SmallVec<[Vector; 8]>,
    ) -> Vector {
        let up = *self.config.up;
        let walkable = self.config.is_walkable(normal);
        let mut plane = normal;
        let mut clipped = if walkable && remaining.dot(up) <= 0.0 {
            along_ground(remaining, normal, up)
        } else {
            remaining - normal * remaining.dot(normal)
        };
        let climbs_steep = !walkable && normal.dot(up) > 0.0 && clipped.dot(up) > MIN_MOVE;
        if climbs_steep && remaining.dot(up) <= 0.0 {
            // The steep face as a vertical wall: slide along it, keep any fall.
            if let Some(wall) = (normal - up * normal.dot(up)).try_normalize() {
                plane = wall;
                clipped = remaining - wall * remaining.dot(wall);
            }
        }
        if let Some(&earlier) = planes
            .iter()
            .find(|&&p| clipped.dot(p) < -MIN_MOVE && p.dot(plane) < 1.0 - 1e-6)
        {
            clipped = match plane.cross(earlier).try_normalize() {
                Some(crease) => crease * remaining.dot(crease),
                None => Vector::ZERO,
            };
            if planes.iter().any(|&p| clipped.dot(p) < -MIN_MOVE) {
                clipped = Vector::ZERO;
            }
        }
        if planes.len() < planes.inline_size() {
            planes.push(plane);
        }
        clipped
    }

    /// Steps up a ledge that blocked the horizontal motion: rise by up to the step height,
    /// move on, and come down on walkable ground. Returns where the shape lands, the
    /// horizontal motion left, and the height gained; `None` if the ledge is too high (no
    /// way forward at step height, or the landing point is more than the step height above
    /// the `ground` the shape stood on: a rounded shape can reach over an edge higher than
    /// it rose) or the landing is not walkable.
    fn step_up(
        &self,
        position: Vector,
        remaining: Vector,
        ground: GroundContact,
    ) -> Option<(Vector, Vector, Scalar)> {
        let up = *self.config.up;
        let ahead = remaining - up * remaining.dot(up);
        if ahead.length() < MIN_MOVE || self.config.step_height <= 0.0 {
            return None;
        }
        let rise = self.free_travel(position, up * self.config.step_height);
        if rise < MIN_MOVE {
            return None;
        }
        let raised = position + up * rise;
        let forward = self.free_travel(raised, ahead);
        if forward < (0.5 * ahead.length()).min(1e-4) {
            return None;
        }
        let moved = raised + ahead.normalize() * forward;
        let down = self.blocker(moved, -up * (rise + self.config.skin_width), false)?;
        let ledge = (down.hit.point2 - ground.point).dot(up);
        if ledge > self.config.step_height || !self.config.is_walkable(self.surface_normal(&down)) {
            return None;
        }
        let landed = moved - up * down.travel;
        let climbed = (landed - position).dot(up);
        Some((
            landed,
            ahead - ahead.normalize() * forward,
            climbed.max(0.0),
        ))
    }

    /// Moves the shape down onto walkable ground within the snap distance, if there is any,
    /// to a skin width above it; or up to that gap if it is closer (rolling over an edge or
    /// landing on one can leave less), as far as the space above allows.
    fn snap(&self, position: Vector) -> Vector {
        let up = *self.config.up;
        let reach = self.config.snap_distance.max(self.config.skin_width);
        let Some(down) = self.blocker(position, -up * reach, false) else {
            return position;
        };
        if !self.config.is_walkable(self.surface_normal(&down)) {
            return position;
        }
        let drop = down.hit.distance - self.config.back_off(-up, down.normal);
        if drop >= 0.0 {
            let drop = drop.min(self.config.snap_distance);
            return position - up * drop;
        }
        position + up * self.free_travel(position, up * -drop)
    }

    /// Walkable ground within a skin width (plus the back-off slack) under the shape.
    pub(crate) fn ground_under(&self, position: Vector) -> Option<GroundContact> {
        let up = *self.config.up;
        let reach = self.config.skin_width * 2.0;
        let down = self.blocker(position, -up * reach, false)?;
        let slack = self.config.back_off(-up, down.normal) + 0.5 * self.config.skin_width;
        if down.hit.distance > slack {
            return None;
        }
        let normal = self.surface_normal(&down);
        self.config.is_walkable(normal).then_some(GroundContact {
            entity: down.hit.entity,
            point: down.hit.point2,
            normal,
        })
    }

    /// The normal of the face under a downward contact: a short ray down at the contact point
    /// (nudged onto the face the shape rests on, so that on an edge it reads the top face, not
    /// the rounded contact normal). Falls back to the contact normal.
    fn surface_normal(&self, down: &Blocker) -> Vector {
        let up = *self.config.up;
        let lateral = down.normal - up * down.normal.dot(up);
        let origin = down.hit.point2 + up * NORMAL_PROBE - lateral * NORMAL_NUDGE;
        let entity = down.hit.entity;
        let ray = self.query.cast_ray_with(
            origin,
            -self.config.up,
            4.0 * NORMAL_PROBE,
            true,
            self.filter,
            &|c, _| c == entity,
        );
        match ray {
            Some(r) if r.distance > 0.0 && r.normal.dot(up) > 0.0 => r.normal,
            _ => down.normal,
        }
    }
}

/// The horizontal part of `motion`, tilted into the plane with normal `normal` (the same
/// horizontal progress, climbing or descending with the surface). On a vertical plane it is
/// left horizontal.
pub(crate) fn along_ground(motion: Vector, normal: Vector, up: Vector) -> Vector {
    let horizontal = motion - up * motion.dot(up);
    let lift = normal.dot(up);
    if lift < 1e-3 {
        return horizontal;
    }
    horizontal - up * (horizontal.dot(normal) / lift)
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// A unit normal tilted `degrees` from up towards +x.
    fn tilted(degrees: Scalar) -> Vector {
        let (sin, cos) = degrees.to_radians().sin_cos();
        Vector::new(sin, cos, 0.0)
    }

    #[test]
    fn along_ground_keeps_the_horizontal_motion_and_follows_the_plane() {
        let normal = tilted(-30.0);
        let along = along_ground(Vector::new(1.0, -0.5, 2.0), normal, Vector::Y);
        assert!((along.x - 1.0).abs() < 1e-6 && (along.z - 2.0).abs() < 1e-6);
        assert!(along.dot(normal).abs() < 1e-6, "{along} leaves the plane");
    }

    #[test]
    fn ground_is_walkable_up_to_the_slope_limit() {
        let config = MoveAndSlideConfig::default();
        assert!(config.is_walkable(tilted(0.0)) && config.is_walkable(tilted(44.9)));
        assert!(!config.is_walkable(tilted(45.1)) && !config.is_walkable(tilted(90.0)));
    }
}
