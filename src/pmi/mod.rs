//! The simple PMI wire (PMI-1 and PMI-2, as MPICH, Intel MPI and Slurm
//! speak it), laid out by role: [`wire`], the one grammar both directions
//! use; [`server`], a sans-IO server core beside the PMIx one, which
//! `pmixw run --mpi pmi1|pmi2` serves MPICH programs with, and its thin
//! driver [`server::fd`] over the ranks' `PMI_FD` sockets and a `PMI_PORT`
//! listener; [`client`], the sans-IO PMI-2 client a task speaks with
//! Slurm's `mpi/pmi2` plugin, and its driver [`client::fd`]; [`joint`]
//! maps keys between the PMI KVS and the PMIx store of a job served both.
//! Grammar, every command and what MPICH 5 asks in what order:
//! spec-notes/pmi.md; the PMI-2 client: spec-notes/pmi2.md.

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod joint;
#[cfg(feature = "server")]
pub mod server;
pub mod wire;
