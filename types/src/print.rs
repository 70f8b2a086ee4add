//! PMIx_Data_print layout (to be written).
