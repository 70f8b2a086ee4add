//! libpmix 4.2.2 cannot pack a non-empty cpuset (its packer treats a
//! character count as an error: bfrops.md §4.13), but it unpacks the list
//! string we send. This is the one place our bytes have no libpmix twin.

use pmix_codec::Format;
use pmix_test_kit::interop::Tools;
use pmix_types::{Cpuset, DataType, Value};

#[test]
fn libpmix_reads_the_cpusets_it_cannot_write() {
    let tools = Tools::build().unwrap_or_else(|e| panic!("{e}"));
    let v = Value::ProcCpuset(Cpuset {
        cpus: Some("0-3,8".into()),
    });
    let bytes =
        pmix_codec::encode(&Format::V41, DataType::ProcCpuset, std::slice::from_ref(&v)).unwrap();
    // count 1, STRING "0-3,8"
    assert_eq!(pmix_types::hex::encode(&bytes), "020c302d332c3800");
    let got = tools
        .unpack(&Format::V41, &[("PROC_CPUSET".into(), bytes.clone())])
        .unwrap();
    assert_eq!(got[0].rc, 0, "libpmix unpack failed");
    assert_eq!(got[0].json, r#"[{"cpus":"0-3,8"}]"#);
    // libpmix's print refuses even the cpuset it just read (-47), and so do we
    assert_eq!(got[0].prints, r#"[{"rc":-47}]"#);
    assert_eq!(pmix_codec::print(&v, None).unwrap_err().status, -47);
}
