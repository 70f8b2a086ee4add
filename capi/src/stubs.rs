//! The rest of libpmix 4.2.2's exported functions: present, so programs
//! (and components such as Open MPI's, which reference more of the
//! server side) that link them load, and answering PMIX_ERR_NOT_SUPPORTED (with
//! one line on stderr per call) without reading their arguments. The
//! argument lists are left out: in the C calling convention the caller
//! owns its arguments, so a function that reads none may declare none.
//! Functions the standard declares `void` ignore the status.

use crate::abi::pmix_status_t;
use pmix_types::status::codes::PMIX_ERR_NOT_SUPPORTED;

macro_rules! not_supported {
    ($($name:ident)*) => {
        crate::guard::exports! {
            $(
                #[doc = concat!("`", stringify!($name), "`: not supported (PMIX_ERR_NOT_SUPPORTED).")]
                fn $name() -> pmix_status_t {
                    eprintln!(concat!("pmix-capi: ", stringify!($name), " is not supported"));
                    PMIX_ERR_NOT_SUPPORTED
                }
            )*
        }
    };
}

not_supported! {
    PMIx_Fabric_register PMIx_Fabric_register_nb PMIx_Fabric_update PMIx_Fabric_update_nb
    PMIx_Fabric_deregister PMIx_Fabric_deregister_nb
    PMIx_Get_credential PMIx_Get_credential_nb PMIx_Validate_credential PMIx_Validate_credential_nb
    PMIx_Register_attributes
    PMIx_server_collect_inventory PMIx_server_deliver_inventory
    PMIx_server_define_process_set PMIx_server_delete_process_set
    PMIx_server_register_resources PMIx_server_deregister_resources
}
