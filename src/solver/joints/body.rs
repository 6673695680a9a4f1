//! A body as the XPBD joint solve sees it: a compact record of what the position solve reads
//! and moves, and a view that joins it to the rest of the solver body.

use bevy::math::{Mat3A, Vec3A, Vec4};

use crate::math::{Matrix3, Quaternion, Scalar, Vector, nudge_rotation};
use crate::solver::RigidBodyQueryItem;
use crate::solver::solver_body::{BodyState, XpbdStart};

/// `q` scaled to unit length by one reciprocal of its length and a product per component
/// (one division instead of glam's four: the joint passes renormalise after every move).
#[inline(always)]
pub(super) fn renormalized(q: Quaternion) -> Quaternion {
    let q = Vec4::from(q);
    Quaternion::from_vec4(q * q.length().recip())
}

/// What the joints' position solve reads and moves of one body, packed into two cache lines:
/// built from the body's constants once per step, its pose refreshed from the body's state at
/// the start of every substep's joint solve and written back at its end (see the
/// [module docs](super)).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct XBody {
    /// Centre-of-mass displacement since the start of the step (the solver body's
    /// `accumulated_translation`).
    pub(super) translation: Vec3A,
    /// Centre of mass at the start of the step.
    pub(super) start: Vec3A,
    pub(super) rotation: Quaternion,
    /// Inverse mass per world axis, locked axes removed (0 for bodies that cannot move).
    pub(super) inverse_mass: Vec3A,
    /// World inverse inertia at the rotation this substep's joint solve starts from, locked
    /// axes removed (0 for bodies that cannot move).
    pub(super) inverse_inertia: Mat3A,
    /// `s` of a *uniform* body, whose inverse mass is the same on every axis and whose world
    /// inverse inertia is `s I` at any rotation (0 for bodies that cannot move, which count as
    /// uniform): its turn is `s v`, three products instead of a matrix product, and the
    /// four-lane solve reads two scalars of it instead of a vector and a matrix.
    pub(super) spin: Scalar,
    pub(super) uniform: bool,
    pub(super) dynamic: bool,
}

impl XBody {
    /// `Some(s)` if `body` is dynamic, its inverse inertia is `s I` and no rotation axis is
    /// locked: then its world inverse inertia is `s I` at any rotation.
    pub(crate) fn isotropic_inertia(body: &RigidBodyQueryItem) -> Option<Scalar> {
        let s = body.local_inverse_inertia.x_axis.x;
        let free = body.locked_axes.rotation_mask() == Vector::ONE;
        (body.is_dynamic()
            && free
            && body.local_inverse_inertia == Matrix3::from_diagonal(Vector::splat(s)))
        .then_some(s)
    }

    /// The joint-solve record of `body`, displaced by `translation` since the start of the
    /// step and turned to `rotation`, with its world inverse inertia at that rotation
    /// (`isotropic`: see [`isotropic_inertia`](Self::isotropic_inertia)).
    #[inline]
    pub(crate) fn gather(
        body: &RigidBodyQueryItem,
        translation: Vector,
        rotation: Quaternion,
        isotropic: Option<Scalar>,
    ) -> Self {
        let dynamic = body.is_dynamic();
        let inverse_mass: Vec3A = if dynamic {
            body.effective_inverse_mass().into()
        } else {
            Vec3A::ZERO
        };
        let same_on_every_axis = inverse_mass == Vec3A::splat(inverse_mass.x);
        Self {
            translation: translation.into(),
            start: body.start_center.into(),
            rotation,
            inverse_mass,
            inverse_inertia: match isotropic {
                Some(s) => Mat3A::from_diagonal(Vector::splat(s)),
                None if dynamic => body.world_inv_inertia_at(rotation).into(),
                None => Mat3A::ZERO,
            },
            spin: isotropic.unwrap_or(0.0),
            uniform: !dynamic || (isotropic.is_some() && same_on_every_axis),
            dynamic,
        }
    }

    /// `I⁻¹ v`, the turn of an angular position impulse `v` (as `s v` for a uniform body).
    #[inline(always)]
    pub(super) fn turn(&self, v: Vec3A) -> Vec3A {
        if self.uniform {
            v * self.spin
        } else {
            self.inverse_inertia * v
        }
    }

    /// Current centre of mass (world).
    #[inline(always)]
    pub(super) fn center(&self) -> Vec3A {
        self.start + self.translation
    }

    /// Moves the body by the position impulse `p` at offset `r` from its centre of mass.
    #[inline(always)]
    pub(super) fn apply_position_impulse(&mut self, p: Vec3A, r: Vec3A) {
        if !self.dynamic {
            return;
        }
        self.translation += self.inverse_mass * p;
        let dtheta = self.turn(r.cross(p));
        // Renormalised at once: the 3×3 blocks are kept for the whole substep while the arms
        // are rotated afresh every pass, and an unnormalised quaternion stretches the arms
        // (by |q|²), which under a large correction makes the passes diverge.
        self.rotation = renormalized(nudge_rotation(self.rotation, dtheta.into()));
    }

    /// Writes the moved pose back into `body` (a body that cannot move is left alone).
    #[inline]
    pub(crate) fn scatter(&self, body: &mut RigidBodyQueryItem) {
        if self.dynamic {
            body.accumulated_translation = self.translation.into();
            body.rotation = self.rotation;
        }
    }

    /// Writes the moved pose back into `state`, of a body that started the step at
    /// `start_rotation` and that this record gathered at rotation `gathered` (a body that
    /// cannot move is left alone, and so is a rotation the joints did not change).
    #[inline]
    pub(crate) fn scatter_state(
        &self,
        state: &mut BodyState,
        start_rotation: Quaternion,
        gathered: Quaternion,
    ) {
        if self.dynamic {
            state.moved = self.translation.extend(0.0);
            if self.rotation != gathered {
                state.set_rotation(self.rotation * start_rotation.conjugate());
            }
        }
    }
}

/// One body of a joint during its solve: the compact pose and mass record, the body's live
/// state (velocities), where it was before this substep's XPBD sets, and where the joint's
/// anchor sits on the body.
///
/// The state's pose is stale while the joint solve runs: the pose is read through
/// [`rotation`](Self::rotation) and [`center`](Self::center) only.
pub(crate) struct JointBody<'a> {
    x: &'a mut XBody,
    state: &'a mut BodyState,
    start: &'a XpbdStart,
    /// The body's rotation at the start of the step.
    start_rotation: Quaternion,
    /// The joint's anchor on this body, relative to its centre of mass, in the body frame.
    arm: Vec3A,
}

impl<'a> JointBody<'a> {
    #[inline]
    pub(crate) fn new(
        x: &'a mut XBody,
        state: &'a mut BodyState,
        (start, start_rotation): (&'a XpbdStart, Quaternion),
        arm: Vec3A,
    ) -> Self {
        Self {
            x,
            state,
            start,
            start_rotation,
            arm,
        }
    }

    /// Current rotation.
    #[inline]
    pub(crate) fn rotation(&self) -> Quaternion {
        self.x.rotation
    }

    /// Current centre of mass (world).
    #[inline]
    pub(crate) fn center(&self) -> Vector {
        self.center_a().into()
    }

    /// [`center`](Self::center) as a SIMD vector.
    #[inline(always)]
    pub(crate) fn center_a(&self) -> Vec3A {
        self.x.center()
    }

    /// The joint's anchor on this body, relative to its centre of mass, in the body frame.
    #[inline]
    pub(crate) fn arm(&self) -> Vector {
        self.arm.into()
    }

    /// The anchor's offset from the centre of mass, in world axes, now.
    #[inline]
    pub(crate) fn anchor_offset(&self) -> Vector {
        self.anchor_offset_a().into()
    }

    /// [`anchor_offset`](Self::anchor_offset) as a SIMD vector.
    #[inline(always)]
    pub(crate) fn anchor_offset_a(&self) -> Vec3A {
        self.x.rotation * self.arm
    }

    /// World inverse inertia for this substep (locked axes removed; 0 for bodies that cannot
    /// move).
    #[inline]
    pub(crate) fn inverse_inertia(&self) -> &Mat3A {
        &self.x.inverse_inertia
    }

    /// The compact record.
    #[inline]
    pub(crate) fn record(&self) -> &XBody {
        self.x
    }

    /// Moves the body by the position impulse `p` at offset `r` from its centre of mass.
    #[inline(always)]
    pub(crate) fn apply_position_impulse(&mut self, p: Vec3A, r: Vec3A) {
        self.x.apply_position_impulse(p, r);
    }

    /// Turns the body by the angular position impulse `p`.
    #[inline]
    pub(crate) fn apply_angular_impulse(&mut self, p: Vector) {
        let x = &mut *self.x;
        if !x.dynamic {
            return;
        }
        let dtheta = x.turn(p.into());
        x.rotation = renormalized(nudge_rotation(x.rotation, dtheta.into()));
    }

    /// `1/m + (r × n)ᵀ I⁻¹ (r × n)` for a push along the unit vector `n` at offset `r` (0 for
    /// bodies that cannot move).
    #[inline]
    pub(crate) fn positional_inverse_mass(&self, r: Vector, n: Vector) -> Scalar {
        if !self.x.dynamic {
            return 0.0;
        }
        let rn = Vec3A::from(r.cross(n));
        Vector::from(self.x.inverse_mass).dot(n * n) + rn.dot(self.x.turn(rn))
    }

    /// `nᵀ I⁻¹ n` for a turn about the unit axis `n` (0 for bodies that cannot move).
    #[inline]
    pub(crate) fn angular_inverse_mass(&self, n: Vector) -> Scalar {
        if !self.x.dynamic {
            return 0.0;
        }
        let n = Vec3A::from(n);
        n.dot(self.x.turn(n))
    }

    /// `1 / I` for a turn about the unit axis `n` through the joint's anchor: the inertia
    /// about the centre of mass plus the parallel-axis term of the centre's swing round the
    /// anchor (0 for bodies that cannot move). With the anchor held still this is exact; a
    /// free anchor only turns the body more easily.
    pub(crate) fn pivot_inverse_inertia(&self, n: Vector) -> Scalar {
        let turn = self.angular_inverse_mass(n);
        // The centre moves along `swing` per radian about the anchor.
        let swing = n.cross(-self.anchor_offset());
        let along = swing.normalize_or_zero();
        let linear = Vector::from(self.x.inverse_mass).dot(along * along);
        let denominator = linear + turn * swing.length_squared();
        if denominator > 0.0 {
            turn * linear / denominator
        } else {
            turn
        }
    }

    /// Angular velocity.
    #[inline]
    pub(crate) fn angular_velocity(&self) -> Vector {
        self.state.angular_velocity()
    }

    /// Velocity of the world point at offset `r` from the centre of mass.
    #[inline]
    pub(crate) fn velocity_at(&self, r: Vector) -> Vector {
        self.state.velocity_at(r)
    }

    /// Adds the velocity impulse `p` at offset `r` (bodies that cannot move are left alone).
    #[inline]
    pub(crate) fn add_velocity_impulse(&mut self, p: Vector, r: Vector) {
        if self.x.dynamic {
            let turn = Vector::from(self.x.turn(r.cross(p).into()));
            let push = Vector::from(self.x.inverse_mass) * p;
            self.state.add_velocities(push, turn);
        }
    }

    /// Adds the angular velocity impulse `p` (bodies that cannot move are left alone).
    #[inline]
    pub(crate) fn add_angular_velocity_impulse(&mut self, p: Vector) {
        if self.x.dynamic {
            let turn = Vector::from(self.x.turn(p.into()));
            self.state.angular_velocity += turn.extend(0.0);
        }
    }

    /// Rotation before this substep's XPBD sets.
    #[inline]
    pub(crate) fn pre_xpbd_rotation(&self) -> Quaternion {
        self.start.rotation * self.start_rotation
    }

    /// Centre of mass before this substep's XPBD sets.
    #[inline]
    pub(crate) fn pre_xpbd_center(&self) -> Vector {
        self.start.center
    }
}
