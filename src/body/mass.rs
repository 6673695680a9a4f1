//! Mass properties: computed from colliders and their density, with user overrides.
//!
//! Each collider contributes `shape.mass_properties(density)` moved to its pose relative to the
//! body origin (parry's parallel-axis sum). [`Mass`] rescales the result so the total mass is the
//! given value while keeping the shape's inertia distribution; [`CenterOfMass`] replaces the
//! centre of mass (the inertia is kept about the new point). A body with no collider and no
//! [`Mass`] gets a mass of 1 kg with the inertia of a unit-radius sphere's 0.4 kg·m², so it can
//! still move.
//!
//! [`ComputedMass`] is filled as soon as a body, a collider (on the body or a child of it), a
//! [`ColliderDensity`], a [`Mass`] or a [`CenterOfMass`] is inserted or removed, so a system
//! that runs right after spawning reads the real mass, not a default. The prepare stage of each
//! step recomputes it for whatever changed since, and stays the authority: a collider attached
//! to its body later (say, with `add_child`) counts from the next step. The computation needs
//! the colliders, so it lives with them, in
//! [`collision::mass_properties`](crate::collision::mass_properties).

use bevy::prelude::*;
use parry3d::mass_properties::MassProperties;

use crate::math::{Matrix3, Quaternion, Scalar, Vector};
use crate::validation::{Validate, check, non_negative};

/// Overrides the body's total mass, in kg. The collider-derived inertia is scaled to match.
/// Removing it goes back to the collider-derived mass.
///
/// Zero, negative or non-finite values are rejected with a warning naming the entity, and the
/// collider-derived mass is used instead (the component keeps the value).
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
#[reflect(Component, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Mass(pub Scalar);

/// Overrides the body's centre of mass, in the body's local frame. Removing it goes back to the
/// collider-derived centre of mass.
///
/// A non-finite value is rejected with a warning naming the entity, and the collider-derived
/// centre of mass (the body origin if it has no collider) is used instead.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct CenterOfMass(pub Vector);

/// Overrides the body's inertia tensor about its centre of mass: the principal moments, in
/// kg·m², about the axes of `local_frame` (a rotation in the body's frame). Removing it goes
/// back to the collider-derived inertia (scaled to [`Mass`] if that is set).
///
/// A zero moment makes the body's rotation about that axis unchanged by any torque or contact
/// (an infinite moment), as [`LockedAxes`](crate::body::LockedAxes) does for the world axes.
/// A negative or non-finite moment, or a rotation that cannot be normalised, is rejected with
/// a warning naming the entity, and the collider-derived inertia is used instead (the
/// component keeps the value).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// // A 2 kg rod 1 m long along X, whatever its collider: I = m L² / 12 across it.
/// let rod = (
///     RigidBody::Dynamic,
///     Mass(2.0),
///     AngularInertia::new(Vec3::new(0.0, 1.0 / 6.0, 1.0 / 6.0)),
/// );
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct AngularInertia {
    /// The principal moments of inertia, kg·m².
    pub principal: Vector,
    /// The rotation from the principal axes to the body's frame.
    pub local_frame: Quaternion,
}

impl AngularInertia {
    /// Principal moments about the body's own axes.
    pub fn new(principal: Vector) -> Self {
        Self::new_with_local_frame(principal, Quaternion::IDENTITY)
    }

    /// Principal moments about the axes of `local_frame`, a rotation in the body's frame.
    pub fn new_with_local_frame(principal: Vector, local_frame: Quaternion) -> Self {
        Self {
            principal,
            local_frame,
        }
    }

    /// The inertia tensor in the body's frame, `R diag(principal) Rᵀ`.
    pub fn tensor(&self) -> Matrix3 {
        let principal = Matrix3::from_diagonal(self.principal);
        crate::math::rotate_inertia(principal, self.local_frame.normalize())
    }

    /// The inverse tensor in the body's frame; a zero moment has a zero inverse (the body
    /// does not turn about that axis).
    fn inverse_tensor(&self) -> Matrix3 {
        let principal = Matrix3::from_diagonal(self.principal.map(inverse_or_zero));
        crate::math::rotate_inertia(principal, self.local_frame.normalize())
    }

    /// Whether the engine can use it.
    fn is_usable(&self) -> bool {
        self.principal.is_finite()
            && self.principal.min_element() >= 0.0
            && crate::math::is_finite_quat(self.local_frame)
    }
}

/// `1 / x`, or 0 for 0: between a moment of inertia and its inverse, where 0 stands for an
/// infinite moment.
pub(crate) fn inverse_or_zero(x: Scalar) -> Scalar {
    if x > 0.0 { 1.0 / x } else { 0.0 }
}

impl Validate for AngularInertia {
    fn validate(&mut self) -> Option<String> {
        (!self.is_usable()).then(|| {
            format!(
                "AngularInertia with moments {} and frame {} is not usable (moments must be \
                 finite and ≥ 0, the frame a finite non-zero quaternion); using the colliders' \
                 inertia",
                self.principal, self.local_frame
            )
        })
    }
}

/// Density of a collider's material in kg/m³, used to compute its body's mass. Default 1000
/// (water), so a 1 m cube weighs 1000 kg.
///
/// Zero is valid: the collider then adds no mass (a sensor or a decorative part). A negative
/// or non-finite density is replaced by 1000 with a warning naming the entity.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ColliderDensity(pub Scalar);

impl Default for ColliderDensity {
    fn default() -> Self {
        Self(1000.0)
    }
}

impl Validate for ColliderDensity {
    fn validate(&mut self) -> Option<String> {
        let why = "is not a finite number ≥ 0";
        check(&mut self.0, non_negative, "ColliderDensity", why, 1000.0)
    }
}

impl Validate for Mass {
    fn validate(&mut self) -> Option<String> {
        (!valid_mass(self.0)).then(|| {
            format!(
                "Mass {} is not a finite number > 0; using the colliders' mass",
                self.0
            )
        })
    }
}

impl Validate for CenterOfMass {
    fn validate(&mut self) -> Option<String> {
        (!self.0.is_finite()).then(|| {
            format!(
                "CenterOfMass {} is not finite; using the colliders' centre of mass",
                self.0
            )
        })
    }
}

/// The user's overrides of a body's mass properties, as read from its components.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MassOverrides {
    pub mass: Option<Scalar>,
    pub center_of_mass: Option<Vector>,
    pub angular_inertia: Option<AngularInertia>,
}

/// A mass override the engine can use.
fn valid_mass(mass: Scalar) -> bool {
    mass.is_finite() && mass > 0.0
}

/// The mass properties the solver uses, computed from colliders and overrides. Read-only for
/// users: change [`Mass`], [`CenterOfMass`], colliders or [`ColliderDensity`] instead.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ComputedMass {
    pub(crate) inverse_mass: Scalar,
    pub(crate) local_inverse_inertia: Matrix3,
    pub(crate) local_center_of_mass: Vector,
}

impl Default for ComputedMass {
    fn default() -> Self {
        Self::fallback()
    }
}

impl ComputedMass {
    /// 1 kg with the inertia of a unit sphere, for bodies with nothing to derive mass from.
    fn fallback() -> Self {
        Self {
            inverse_mass: 1.0,
            local_inverse_inertia: Matrix3::from_diagonal(Vector::splat(2.5)),
            local_center_of_mass: Vector::ZERO,
        }
    }

    /// The mass in kg (infinite for an inverse mass of zero).
    pub fn mass(&self) -> Scalar {
        if self.inverse_mass > 0.0 {
            1.0 / self.inverse_mass
        } else {
            Scalar::INFINITY
        }
    }

    /// The inverse mass, 1/kg.
    pub fn inverse_mass(&self) -> Scalar {
        self.inverse_mass
    }

    /// The inverse inertia tensor in the body frame, about the centre of mass.
    pub fn local_inverse_inertia(&self) -> Matrix3 {
        self.local_inverse_inertia
    }

    /// The centre of mass in the body frame.
    pub fn local_center_of_mass(&self) -> Vector {
        self.local_center_of_mass
    }

    /// The centre of mass in world space for a body at `position` with `rotation`.
    pub fn world_center_of_mass(&self, position: Vector, rotation: Quaternion) -> Vector {
        position + rotation * self.local_center_of_mass
    }

    /// The inertia tensor in the body frame, about the centre of mass: the inverse of
    /// [`local_inverse_inertia`](Self::local_inverse_inertia). A body that cannot turn about
    /// some axis (a locked axis, a zero [`AngularInertia`] moment) has an infinite moment there,
    /// and this matrix is then not finite.
    pub fn local_inertia(&self) -> Matrix3 {
        self.local_inverse_inertia.inverse()
    }

    /// The inertia tensor in world space for a body with `rotation`, `R I Rᵀ`: multiply it by
    /// the angular velocity for the angular momentum about the centre of mass.
    pub fn world_inertia(&self, rotation: Quaternion) -> Matrix3 {
        crate::math::rotate_inertia(self.local_inertia(), rotation)
    }

    /// Builds the solver's view of summed collider mass properties with the user's overrides.
    /// Overrides the engine cannot use are ignored (the validation stage reports them); a
    /// degenerate inertia is replaced, and reported if `report` is set.
    pub(crate) fn from_parts(
        entity: Entity,
        colliders: Option<MassProperties>,
        overrides: MassOverrides,
        report: bool,
    ) -> Self {
        let mass = overrides.mass.filter(|&m| valid_mass(m));
        let center_of_mass = overrides.center_of_mass.filter(|c| c.is_finite());
        let inertia = overrides.angular_inertia.filter(AngularInertia::is_usable);
        let mut computed = Self::from_colliders(entity, colliders, mass, center_of_mass, report);
        if let Some(inertia) = inertia {
            computed.local_inverse_inertia = inertia.inverse_tensor();
        }
        computed
    }

    /// [`from_parts`](Self::from_parts) without the inertia override.
    fn from_colliders(
        entity: Entity,
        colliders: Option<MassProperties>,
        mass: Option<Scalar>,
        center_of_mass: Option<Vector>,
        report: bool,
    ) -> Self {
        let Some(props) = colliders.filter(|p| p.inv_mass > 0.0 && p.inv_mass.is_finite()) else {
            let mut fallback = Self::fallback();
            if let Some(m) = mass {
                fallback.inverse_mass = 1.0 / m;
                fallback.local_inverse_inertia *= 1.0 / m;
            }
            fallback.local_center_of_mass = center_of_mass.unwrap_or(Vector::ZERO);
            return fallback;
        };
        let mut inverse_inertia = props.reconstruct_inverse_inertia_matrix();
        let mut inverse_mass = props.inv_mass;
        if let Some(m) = mass {
            // Same shape, new total mass: inertia scales with mass.
            let scale = inverse_mass * m;
            inverse_mass = 1.0 / m;
            inverse_inertia *= 1.0 / scale;
        }
        let local_center_of_mass = center_of_mass.unwrap_or(props.local_com);
        if !inverse_inertia.is_finite() {
            if report {
                warn!("{entity}: degenerate inertia from its colliders; using a unit sphere's");
            }
            inverse_inertia = Matrix3::from_diagonal(Vector::splat(2.5 * inverse_mass));
        }
        Self {
            inverse_mass,
            local_inverse_inertia: inverse_inertia,
            local_center_of_mass,
        }
    }
}
