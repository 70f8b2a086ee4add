//! The tools behind the `pmixw` command line, shared by the binary and its
//! tests: read PMIx traffic ([`inspect`], [`pcap`], [`infer`]), sit in it
//! ([`relay`]), check it ([`verify`], [`keycheck`]), diagnose a job's
//! PMIx environment ([`doctor`]), and the node-to-node protocol of a
//! `pmixw run` across nodes ([`bridge`]). No stability promise: the library API is
//! `pmix-wire`'s.

pub mod bridge;
pub mod doctor;
pub mod infer;
pub mod inspect;
pub mod keycheck;
pub mod pcap;
pub mod relay;
pub mod verify;
