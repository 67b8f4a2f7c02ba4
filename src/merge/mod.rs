pub mod ssa;
