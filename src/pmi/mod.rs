//! The simple PMI wire (PMI-1 and PMI-2, as MPICH, Intel MPI and Slurm
//! speak it): [`wire`], the one grammar both directions use (the PMI-2
//! client of [`crate::pmi2`] parses with it too), and [`server`], a
//! sans-IO server core beside the PMIx one, which `pmixw run --mpi
//! pmi1|pmi2` serves MPICH programs with; [`fd`] is its thin driver over
//! the ranks' `PMI_FD` sockets and a `PMI_PORT` listener; [`joint`] maps
//! keys between the PMI KVS and the PMIx store of a job served both.
//! Grammar, every command and what MPICH 5 asks in what order:
//! spec-notes/pmi.md.

#[cfg(all(feature = "server", unix))]
pub mod fd;
#[cfg(feature = "server")]
pub mod joint;
#[cfg(feature = "server")]
pub mod server;
pub mod wire;
