//! Mass properties: computed from colliders and their density, with user overrides.
//!
//! Each collider contributes `shape.mass_properties(density)` moved to its pose relative to the
//! body origin (parry's parallel-axis sum). [`Mass`] rescales the result so the total mass is the
//! given value while keeping the shape's inertia distribution; [`CenterOfMass`] replaces the
//! centre of mass (the inertia is kept about the new point). A body with no collider and no
//! [`Mass`] gets a mass of 1 kg with the inertia of a unit-radius sphere's 0.4 kg·m², so it can
//! still move.

use bevy::prelude::*;
use parry3d::mass_properties::MassProperties;

use crate::math::{Matrix3, Quaternion, Scalar, Vector};

/// Overrides the body's total mass, in kg. The collider-derived inertia is scaled to match.
///
/// Zero, negative or non-finite values are rejected with a warning naming the entity, and the
/// collider-derived mass is used instead.
#[derive(Component, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
pub struct Mass(pub Scalar);

/// Overrides the body's centre of mass, in the body's local frame.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
pub struct CenterOfMass(pub Vector);

/// Density of a collider's material in kg/m³, used to compute its body's mass. Default 1000
/// (water), so a 1 m cube weighs 1000 kg.
#[derive(Component, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
pub struct ColliderDensity(pub Scalar);

impl Default for ColliderDensity {
    fn default() -> Self {
        Self(1000.0)
    }
}

/// The mass properties the solver uses, computed from colliders and overrides. Read-only for
/// users: change [`Mass`], [`CenterOfMass`], colliders or [`ColliderDensity`] instead.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
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

    /// Builds the solver's view of summed collider mass properties with the user's overrides.
    pub(crate) fn from_parts(
        entity: Entity,
        colliders: Option<MassProperties>,
        mass: Option<Scalar>,
        center_of_mass: Option<Vector>,
    ) -> Self {
        let mass = mass.filter(|&m| {
            let valid = m.is_finite() && m > 0.0;
            if !valid {
                warn!("{entity}: Mass({m}) must be finite and positive; using the colliders' mass");
            }
            valid
        });
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
        let mut local_center_of_mass = props.local_com;
        if let Some(com) = center_of_mass.filter(|c| c.is_finite()) {
            local_center_of_mass = com;
        }
        if !inverse_inertia.is_finite() {
            warn!("{entity}: degenerate inertia from its colliders; using a unit sphere's");
            inverse_inertia = Matrix3::from_diagonal(Vector::splat(2.5 * inverse_mass));
        }
        Self {
            inverse_mass,
            local_inverse_inertia: inverse_inertia,
            local_center_of_mass,
        }
    }
}

/// Recomputes [`ComputedMass`] for new bodies, bodies whose overrides changed, and bodies whose
/// colliders changed.
#[allow(clippy::type_complexity)]
pub(crate) fn update_mass_properties(
    mut ownership: ResMut<crate::collision::collider::ColliderOwnership>,
    changed: Query<
        Entity,
        (
            With<crate::RigidBody>,
            Or<(
                Added<crate::RigidBody>,
                Changed<Mass>,
                Changed<CenterOfMass>,
            )>,
        ),
    >,
    colliders: Query<
        (
            &crate::Collider,
            &ColliderDensity,
            &crate::collision::collider::ColliderPose,
            &crate::ColliderOf,
        ),
        Without<crate::collision::collider::DisabledCollider>,
    >,
    mut bodies: Query<(&mut ComputedMass, Option<&Mass>, Option<&CenterOfMass>)>,
) {
    let mut dirty = std::mem::take(&mut ownership.dirty_bodies);
    dirty.extend(changed.iter());
    if dirty.is_empty() {
        ownership.dirty_bodies = dirty;
        return;
    }
    dirty.sort_unstable();
    dirty.dedup();
    let mut sums: bevy::ecs::entity::EntityHashMap<Option<MassProperties>> =
        dirty.iter().map(|&e| (e, None)).collect();
    for (collider, density, pose, collider_of) in &colliders {
        if let Some(sum) = sums.get_mut(&collider_of.body) {
            let density = if density.0.is_finite() && density.0 > 0.0 {
                density.0
            } else {
                1000.0
            };
            let props = collider
                .shape()
                .mass_properties(density)
                .transform_by(&pose.pose());
            *sum = Some(sum.map_or(props, |s| s + props));
        }
    }
    for &entity in &dirty {
        if let Ok((mut computed, mass, com)) = bodies.get_mut(entity) {
            let props = sums.get(&entity).copied().flatten();
            *computed =
                ComputedMass::from_parts(entity, props, mass.map(|m| m.0), com.map(|c| c.0));
        }
    }
    dirty.clear();
    ownership.dirty_bodies = dirty;
}
