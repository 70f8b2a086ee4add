//! pmix-codec
