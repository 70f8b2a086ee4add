//! FLOAT/DOUBLE as glibc "%f" text (to be written).
