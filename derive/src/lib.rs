//! Derive macros of [impetus3d](https://crates.io/crates/impetus3d). Use them through
//! `impetus3d` (`use impetus3d::prelude::*;` brings `#[derive(PhysicsLayer)]`), not directly.

use proc_macro::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields, parse_macro_input};

/// The most layers a `u32` mask holds.
const MAX_LAYERS: usize = 32;

/// Implements `impetus3d::collision::PhysicsLayer` for an enum of unit variants: the n-th
/// variant (counted from 0, in declaration order, whatever its discriminant) is bit `1 << n`.
/// An enum with more than 32 variants, a variant with fields, a struct or a union is a compile
/// error naming the problem.
#[proc_macro_derive(PhysicsLayer)]
pub fn derive_physics_layer(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match physics_layer(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn physics_layer(input: &DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "PhysicsLayer can only be derived for an enum of unit variants, one per layer",
        ));
    };
    if data.variants.len() > MAX_LAYERS {
        return Err(syn::Error::new_spanned(
            &input.ident,
            format!(
                "PhysicsLayer: {} variants, but a collision mask holds at most {MAX_LAYERS} layers",
                data.variants.len()
            ),
        ));
    }
    let mut arms = Vec::with_capacity(data.variants.len());
    for (bit, variant) in data.variants.iter().enumerate() {
        if !matches!(variant.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(
                variant,
                "PhysicsLayer: a layer variant cannot have fields",
            ));
        }
        let name = &variant.ident;
        let bit = bit as u32;
        arms.push(quote! { Self::#name => 1u32 << #bit });
    }
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics ::impetus3d::collision::PhysicsLayer for #ident #type_generics
            #where_clause
        {
            fn to_bits(&self) -> u32 {
                match self {
                    #(#arms,)*
                }
            }
        }
    })
}
