//! Replays the differential corpus (corpus/fuzz/diff_unpack/,
//! corpus/fuzz/diff_encode/) and the minimized decoding corpus
//! (corpus/fuzz/unpack_any/) against the system libpmix on stable Rust,
//! through the logic of the fuzz targets `diff_unpack` and `diff_encode`
//! (test-kit/src/differential.rs), and checks every listed divergence with a
//! named input. Without libpmix (pkg-config pmix) the tests skip and say
//! so; in CI (CI=true) they fail.

use pmix_test_kit::differential;

use differential::{diff_encode, diff_unpack, LibPmix, Verdict, KNOWN_DIVERGENCES};
use std::path::PathBuf;

fn libpmix() -> Option<LibPmix> {
    match LibPmix::new() {
        Ok(c) => Some(c),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI: the differential replay needs libpmix: {e}")
        }
        Err(e) => {
            eprintln!("skipped: the differential replay needs libpmix: {e}");
            None
        }
    }
}

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/fuzz")
        .join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn replay(dir: &str, check: fn(&mut LibPmix, &[u8]) -> Verdict, min: usize) {
    let Some(mut c) = libpmix() else { return };
    let files = corpus(dir);
    assert!(
        files.len() >= min,
        "corpus/fuzz/{dir}: {} files",
        files.len()
    );
    let mut bad = Vec::new();
    let mut listed = std::collections::BTreeMap::new();
    // PMIXW_DIFF_VERBOSE=1: name every listed input (to pick named regressions)
    let verbose = std::env::var_os("PMIXW_DIFF_VERBOSE").is_some();
    for (name, data) in &files {
        match check(&mut c, data) {
            Verdict::Divergence(d) => bad.push(format!("{name}: {d}")),
            Verdict::Listed(n) => {
                *listed.entry(n).or_insert(0) += 1;
                if verbose {
                    eprintln!("listed {n}: {name} {}", pmix_types::hex::encode(data));
                }
            }
            Verdict::Agree | Verdict::Skip => {}
        }
    }
    eprintln!(
        "corpus/fuzz/{dir}: {} inputs, listed divergences {listed:?}",
        files.len()
    );
    assert!(
        bad.is_empty(),
        "{} unlisted divergences:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn diff_unpack_corpus_agrees_with_libpmix() {
    replay("diff_unpack", diff_unpack, 10);
}

#[test]
fn diff_encode_corpus_agrees_with_libpmix() {
    replay("diff_encode", diff_encode, 10);
}

#[test]
fn decoding_corpus_agrees_with_libpmix() {
    replay("unpack_any", diff_unpack, 100);
    replay("unpack_any", diff_encode, 100);
}

/// Named inputs: (name, target, input hex, the listed divergence it shows
/// or None for "must agree"). Every entry of KNOWN_DIVERGENCES has one.
const REGRESSIONS: &[(&str, &str, &str, Option<&str>)] = &[
    (
        "data_type_15_in_v41",
        "diff_unpack",
        // DATA_TYPE, v41: count 1 (zig-zag 02), 15 (flex 0f), read back by libpmix as -8
        "2405 02 0f",
        Some("data-type-zigzag"),
    ),
    (
        "proc_stats_in_v41",
        "diff_unpack",
        // PROC_STATS, v41: libpmix 4.2.2's own packing of PROC_STATS/basic
        "3d05 020e6e6f6465303100126e73706163652d6100010ee7070c612e6f7574005200000b0812312e3235303030300012302e3030303030300012302e30303030303000040000",
        Some("proc-stats-unpack"),
    ),
    (
        "data_array_of_data_array_in_v41",
        "diff_unpack",
        // DATA_ARRAY, v41: one array of 2 DATA_ARRAYs (UINT64 [0, 1], BOOL [true])
        "2705 0227020f020001010101",
        Some("darray-nomem"),
    ),
    (
        "int32_count_0_in_v41",
        "diff_unpack",
        // INT32, v41: one unit of count 0
        "0905 00",
        Some("count-zero-unit"),
    ),
    (
        "data_array_of_alloc_directive_in_v20",
        "diff_unpack",
        // DATA_ARRAY, v20: one array of one ALLOC_DIRECTIVE (1)
        "2701 00000001002b000f000000000000000101",
        Some("v20-darray-element-types"),
    ),
    (
        "value_persist_in_v20",
        "diff_unpack",
        // VALUE, v20: one value, type PERSIST (0x1e), 4
        "1501 00000001001e04",
        Some("v20-value-persist"),
    ),
    (
        "proc_state_in_v12",
        "diff_unpack",
        // PROC_STATE, v12: a unit of 4 items, which take no bytes
        "2500 00000004",
        Some("v12-no-payload-types"),
    ),
    (
        "command_in_v12",
        "diff_unpack",
        // COMMAND, v12: 4 items read by libpmix as 4-byte ints
        "2200 00000004ff04010000000000ffffffffffffffd2",
        Some("legacy-widened-enums"),
    ),
    (
        "info_key_with_inner_nul_in_v41",
        "diff_unpack",
        // INFO, v41: count 1, then a 4-byte key "k\x02\0\0" (a NUL inside) and nothing more
        "1805 02046b020000",
        Some("c-string-unchecked"),
    ),
    (
        "float_text_not_a_number_in_v41",
        "diff_unpack",
        // FLOAT, v41: one text with bytes that are not a number
        "1005 024e313030303030303031353034373436d0cfcfcfcfcfcec631363632363737322e30303030303000",
        Some("float-text-unchecked"),
    ),
    (
        "pid_count_0_then_more_in_v4",
        "diff_unpack",
        // PID, v4: a unit of count 0, then the byte 31 (libpmix: -46)
        "0504 0031",
        Some("count-zero-unit"),
    ),
    (
        "value_varint_past_the_end_in_v4",
        "diff_unpack",
        // VALUE, v4: the last varint's continuation bit (ff) runs past the end
        "1504 023b0400012f7fff",
        Some("flex-read-past-end"),
    ),
    (
        "bool_count_0x53000000_in_v12",
        "diff_unpack",
        // BOOL, v12: a unit of count 0x53000000 with 73 bytes behind it
        "0100 0000530000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000170000000000000000000000000000000000000000010000000000",
        Some("harness-64-items"),
    ),
    (
        "value_of_info_array_crashes_libpmix_in_v20",
        "diff_unpack",
        // VALUE, v20: count 1, a value of type INFO_ARRAY (0x2c) followed by one byte: libpmix SIGSEGV
        "1501 00000001002c04",
        Some("libpmix-crash"),
    ),
    (
        "timeval_negative_count_in_v4",
        "diff_unpack",
        // TIMEVAL, v4: count 1, sec 5 (0a zig-zag), usec as a negative flex length 69 7f
        "1204 020a697f",
        Some("negative-count"),
    ),
    (
        "regex_count_not_1_in_v41",
        "diff_unpack",
        // REGEX, v41: two regexes, the second's string count -23 (zig-zag 2d):
        // both refuse (libpmix -50). Listed as regex-string-count until unpack.c
        // stopped taking an INADEQUATE_SPACE with no items for success
        "3105 18706d69785b6e6f64655b323a31310518706d69785b6e6f64655b323a312d335db45d002d335db45d00",
        None,
    ),
    (
        "time_beyond_ctime_in_v3",
        "diff_unpack",
        // TIME, v3: count 1, 0x655300000000f100 seconds: PMIx_Data_print crashes,
        // the unpack and re-pack (all the differential check uses) agree
        "1303 00000001655300000000f100",
        None,
    ),
    (
        "info_directives_in_v12",
        "diff_unpack",
        // INFO_DIRECTIVES, v12: a unit of count 0 (libpmix: -47)
        "2300 00000000",
        Some("v12-no-payload-types"),
    ),
    (
        "info_value_type_65535_in_v12",
        "diff_unpack",
        // INFO, v12: key "k", a value type that we read as 65535
        "1800 00000001000000026b00000000097a00000c08",
        Some("v12-wide-int"),
    ),
    (
        "data_array_element_type_125_in_v4",
        "diff_unpack",
        // DATA_ARRAY, v4: the second array's element type is 125, not a PMIx type
        "2704 022804feffff7effffff0fff0f20000000000400ffff00fd000009ff0401000100000000000000ffff0000ffffff00ffffd2",
        Some("unknown-type-unchecked"),
    ),
    (
        "cpuset_text_not_a_list_in_v4",
        "diff_encode",
        // PROC_CPUSET, v4: one cpuset, text "\x04": libpmix re-packs an empty set (02 02 00)
        "3404 02040400",
        Some("cpuset-text-parsed"),
    ),
    (
        "int32_unit_cut_after_64_items_in_v4_native",
        "diff_unpack",
        // INT32, v4 psquash native: a unit of 0x54465f43 items cut short
        "0924 00000000000000000000000000000054465f434c49000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000400000000ffffffff0a0003e8fffffcffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4ffffff18",
        Some("harness-64-items"),
    ),
    (
        "query_with_null_key_in_v41",
        "diff_unpack",
        // QUERY, v41: one query whose key list holds a NULL string
        "2905 023200000000000000000000000000000000000000000000000000000000000000000045006163652d610003",
        Some("null-string-accepted"),
    ),
    (
        "value_data_buffer_in_v41",
        "diff_encode",
        // VALUE, v41: UINT64 15, then a DATA_BUFFER value, then two UNDEF
        "1505 080f0f416b6b400641046600590ad18f6001fe887a001204060012040600000e02fe887a000a01003030e5000e5057443a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a293a3a3a3a3a3a3a3a3a3a3a3a0000000000000000000000",
        Some("value-data-buffer-repack"),
    ),
    (
        "topo_without_xml_in_v41",
        "diff_encode",
        // TOPO, v41: one topology, support "", XML NULL
        "3805 0200",
        Some("topo-null-crash"),
    ),
    (
        "described_proc_unit_in_v12",
        "diff_encode",
        // PROC, v12 described: we encode a unit of no PROC as 00000009 00000000 00000016
        "1610 ",
        Some("v12-described-proc"),
    ),
    (
        "value_holding_value_in_v4",
        "diff_unpack",
        // VALUE, v4: the 8th value is of type VALUE
        "1504 0214041414ecebebfe00000014001414141400001414141414141414ebebfe000000140014141414000014141414141414142c141414a22b141414141514140000141414142d14141414141414141414141414141438",
        Some("value-holds-value"),
    ),
    (
        "int16_overlong_varint_in_v41",
        "diff_unpack",
        // INT16, v41: 9 values, the first 32767 as the 4-byte varint fe ff 83 00
        "0805 12feff830000007f0000000000",
        Some("overlong-varint"),
    ),
    (
        "undef_array_of_2_28_in_v4",
        "diff_encode",
        // DATA_ARRAY, v4: one of the arrays is UNDEF of size 268435283 (libpmix's
        // print walked them all; unpack and re-pack agree at once)
        "2704 00000014211505000c0f0f4f50454e424c41535f4c325f534908040e002e000000001000d3feffff000000000000000002",
        None,
    ),
    (
        "regex_count_8_in_2_bytes_in_v41",
        "diff_unpack",
        // REGEX, v41: count 8 (zig-zag 10), then 2 bytes: the first regex's
        // string count is 2, libpmix answers INADEQUATE_SPACE with no items
        // (its preg unpacks one STRING); both refuse. Listed as
        // regex-unit-lost while unpack.c took that answer for success
        "3105 100400",
        None,
    ),
    (
        "pid_beyond_pid_t_in_v41",
        "diff_unpack",
        // PID, v41: count 5, pids 5, 5, 5, then a varint of 177599542036422387
        "0505 0a0a0a0ae6fbd2f5f5f5faf6040a0a",
        Some("pid-range-unchecked"),
    ),
    (
        "value_count_19_in_7_bytes_in_v4",
        "diff_unpack",
        // VALUE, v4: count 19 (zig-zag 26), four UNDEF, a REGEX (31) whose
        // string count is 5 (0a): libpmix's INADEQUATE_SPACE from inside the
        // REGEX, no items; both refuse (was value-unit-lost, the same harness
        // defect as regex_count_8_in_2_bytes_in_v41)
        "1504 2600000000310a00",
        None,
    ),
    (
        "uint_unit_of_101_cut_in_v41_native",
        "diff_unpack",
        // UINT, v41 native: count 101 (65000000), the bytes end inside item 64
        "0b65000000430009000000544f585f4f5645525249444500000000000000000000000001000000000000930000000000000700000000000000000000320000000000000000005049505f43455254000000ffff0000000000000054010000000000000000003e2500000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000ff004e00ff6b2800000a000000008000030000000b00",
        Some("harness-64-items"),
    ),
    (
        "topo_xml_not_xml_in_v41",
        "diff_unpack",
        // TOPO, v41: one topology, XML "x" (04 78 00), then 32 bytes of support
        "3805 02047800 0000000000000000000000000000000000000000000000000000000000000000",
        Some("topo-xml-parsed"),
    ),
    (
        "value_data_buffers_crash_repack_in_v41",
        "diff_encode",
        // VALUE, v41: among 14 values two DATA_BUFFERs (type 41); libpmix SIGSEGV on our bytes
        "1505 000a0000020000000841020a0a0000020000000841020a00360000000000000002000000000000",
        Some("value-data-buffer-repack"),
    ),
    (
        "pointer_units_beyond_the_budget_in_v41",
        "diff_unpack",
        // POINTER, v41: 35 units of 30 pointers (3c, then the sentinel 00): 1050 > 1024
        "1f05 3c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c00",
        Some("zero-byte-budget"),
    ),
    (
        "undef_array_of_32765_in_v4",
        "diff_unpack",
        // DATA_ARRAY, v4: 3 arrays, the second UNDEF of 32765 (fd ff 01): libpmix's
        // print of it took 1.8 s of CPU; unpack and re-pack agree at once
        "2704 06 2700 00fdff01 010101",
        None,
    ),
    (
        "value_regex_packed_form_in_v41",
        "diff_unpack",
        // VALUE, v41: one REGEX value in the packed form, count 1 and a NULL string: libpmix SIGSEGV re-packing it
        "1505 02310200",
        Some("regex-pack-crash"),
    ),
    (
        "int_tagged_uint64_in_v3",
        "diff_unpack",
        // INT, v3: count 1, tag UINT64 (000f), 0x00000001000f0100: libpmix keeps the low 32 bits
        "0603 00000001 000f 00000001000f0100",
        Some("int-sized-tag-truncated"),
    ),
    (
        "node_stats_with_a_disk_in_v41",
        "diff_unpack",
        // NODE_STATS, v41: 11 empty float texts, sample time, one disk stat: libpmix re-packs no disk stats
        "4005 0202000000000000000000000000002c000100000001003a05",
        Some("node-stats-pointer"),
    ),
    (
        "kval_float_null_text_in_v41",
        "diff_unpack",
        // KVAL, v41: key "pmix.test.kv", a FLOAT value whose text is NULL (10 00): libpmix re-packs -0.000000
        "1c05 241a706d69782e746573742e6b7600000000000000000000000000000000000000000000000000000000000000000000000000400000000000000000000000000000000000000000000000100000000000000000000000000000000000000000000000000100000000000003000000000000000000003504046000000000000000",
        Some("kval-float-null-text"),
    ),
    (
        "value_regex_empty_packed_form_in_v4",
        "diff_encode",
        // VALUE, v4: INT16s and a REGEX value in the packed form with an empty string; libpmix re-packs a NULL string
        "150d 000200080808080808080808080808090808080808080808080808063102020000",
        Some("regex-pack-crash"),
    ),
    (
        "value_persist_in_v20_refused_with_1",
        "diff_unpack",
        // VALUE, v20: one PERSIST value (001e, 00), then 00000000: libpmix -1
        "1501 00000001001e0000000000",
        Some("v20-value-persist"),
    ),
    (
        "info_value_type_padding_in_v20",
        "diff_unpack",
        // INFO, v20: key "k", flags 0, value type as INT32 0x2b000000: the type is 0 (UNDEF), libpmix re-packs the 2b
        "1801 00000001 000000026b00 00000000 0009 2b000000",
        Some("v20-type-padding"),
    ),
    (
        "buffer_units_after_the_first_in_v4",
        "diff_unpack",
        // BUFFER, v4: units of 2, 1 and 1 buffers; the harness gave libpmix a
        // 512-byte stride, so units after the first were re-packed empty
        "1a04 04 0000 0102ccdd 02 0102aabb 02 0101ee",
        None,
    ),
    (
        "value_proc_stats_then_int32_read_late_in_v41",
        "diff_unpack",
        // VALUE, v41: one PROC_STATS, then bytes we read as a unit of count
        // cc cc .. 03, beyond INT32; libpmix reads a peak_vsize never sent (00,
        // the processor) and takes them for its sample_time (the 2026-11-24
        // campaign's VALUE classes: 30 358 inputs)
        "1505 023d000c613e6f757400d6520a00000000000000000000000000cccccccccccc9ecc03",
        Some("proc-stats-unpack"),
    ),
    (
        "regex_string_count_2_in_v41_agrees",
        "diff_unpack",
        // REGEX, v41: one regex in the count + STRING form with count 2, "a"
        // and "b": libpmix's -19 with no values, its refusal; the close input
        // for negative-count's REGEX clause, which must not cover it
        "3105 02 04 046100 046200",
        None,
    ),
    (
        "value_empty_info_array_in_v12",
        "diff_unpack",
        // VALUE, v12: one value, type INFO_ARRAY (22), size 0 tagged INT32: libpmix
        // writes the info array 8 bytes past the DATA_ARRAY it allocated, SIGABRT
        "1500 00000001 00000009 00000016 00000009 00000000",
        Some("v12-info-array-value-overrun"),
    ),
    (
        "value_int32_in_v12_agrees",
        "diff_unpack",
        // VALUE, v12: the same value layout holding INT32 5: no INFO_ARRAY, both agree
        "1500 00000001 00000009 00000009 00000005",
        None,
    ),
    (
        "uint32_in_v41_agrees",
        "diff_encode",
        // UINT32, v41: [1, 300]; libpmix reads our bytes back
        "0e05 0401ac02",
        None,
    ),
    (
        "darray_info_persist_crashes_libpmix_in_v20",
        "diff_unpack",
        // DATA_ARRAY, v20: INFO "a" (UINT32 1) and INFO "b" whose value is PERSIST (001e, 00): libpmix SIGABRT
        "2701 00000001 0018 000f 0000000000000002 00000002 6100 00000000 0009 0000000e 00000001 00000002 6200 00000000 0009 0000001e 00",
        Some("v20-value-persist-crash"),
    ),
    (
        "darray_info_uint32_in_v20_agrees",
        "diff_unpack",
        // DATA_ARRAY, v20: the same two INFOs, "b" a UINT32 (0000000e) 2: both read it
        "2701 00000001 0018 000f 0000000000000002 00000002 6100 00000000 0009 0000000e 00000001 00000002 6200 00000000 0009 0000000e 00000002",
        None,
    ),
    (
        "proc_rank_int32_max_minus_1_in_v12",
        "diff_unpack",
        // PROC, v12: nspace "" (00000001 00), rank INT32 7ffffffe (v1.2's WILDCARD): libpmix re-packs fffffffe
        "1600 00000001 00000001 00 00000009 7ffffffe",
        Some("v12-rank-sentinels"),
    ),
    (
        "proc_rank_int32_max_in_v12",
        "diff_unpack",
        // PROC, v12: nspace "ns", rank 7fffffff (v1.2's UNDEF): libpmix re-packs ffffffff
        "1600 00000001 00000003 6e7300 00000009 7fffffff",
        Some("v12-rank-sentinels"),
    ),
    (
        "proc_rank_int32_max_minus_2_in_v12_agrees",
        "diff_unpack",
        // PROC, v12: rank 7ffffffd, an ordinary rank: both keep it
        "1600 00000001 00000001 00 00000009 7ffffffd",
        None,
    ),
    (
        "double_null_text_in_v12",
        "diff_unpack",
        // DOUBLE, v12: count 1, a NULL text (00000000): 4 bytes, fewer than sizeof(double): libpmix -50
        "1100 00000001 00000000",
        Some("double-size-precheck"),
    ),
    (
        "double_null_text_in_v20",
        "diff_unpack",
        // DOUBLE, v20: the same unit
        "1101 00000001 00000000",
        Some("double-size-precheck"),
    ),
    (
        "double_text_of_9_bytes_in_v12_agrees",
        "diff_unpack",
        // DOUBLE, v12: count 1, text "0.000000" (length 9): 13 bytes, both read 0.0
        "1100 00000001 00000009 302e30303030303000",
        None,
    ),
    (
        "darray_size_tagged_uint16_twice_in_v20_described",
        "diff_unpack",
        // DATA_ARRAY, v20 described: type UNDEF, size tags UINT16 (000d) 30ea: libpmix reads 30ea as the size, we refuse
        "2711 0009 00000001 0027 0000 000d 30ea",
        Some("v20-described-narrow-size"),
    ),
    (
        "darray_size_uint16_in_v20_described",
        "diff_unpack",
        // DATA_ARRAY, v20 described: size tags 000d 000d, then 0000: we read size 0, libpmix reads 000d as the size and the 0000 as a new unit (-20)
        "2711 0009 00000001 0027 0000 000d 000d 0000",
        Some("v20-described-narrow-size"),
    ),
    (
        "value_modex_in_v21",
        "diff_encode",
        // VALUE, v21: one MODEX value (001d) of 2 bytes (size 000f 0000000000000002, 04 ff): libpmix re-packs size 0
        "1502 00000001 001d 000f 0000000000000002 04ff",
        Some("value-modex-struct"),
    ),
    (
        "value_empty_modex_in_v21_agrees",
        "diff_encode",
        // VALUE, v21: one MODEX value of no bytes: libpmix re-packs the same
        "1502 00000001 001d 000f 0000000000000000",
        None,
    ),
    (
        "status_int64_tag_in_v12_described",
        "diff_unpack",
        // STATUS, v12 described: count 1, INT (6), system tags INT64 (0a) then 0, value 000000ff: libpmix reads no second tag and accepts, we refuse (the late closing campaign)
        "1410 00000009 00000001 00000006 0000000a 00000000 000000ff",
        Some("v12-described-int-size"),
    ),
    (
        "status_int64_tags_twice_cut_in_v12_described",
        "diff_unpack",
        // STATUS, v12 described: system tags INT64 (0a) twice, then 4 bytes: we need 8, libpmix reads 0000000a 00050000 and accepts (the late closing campaign's 3 unlisted)
        "1410 00000009 00000001 00000006 0000000a 0000000a 00050000",
        Some("v12-described-int-size"),
    ),
    (
        "status_int64_tags_twice_in_v12_described",
        "diff_unpack",
        // STATUS, v12 described: system tags INT64 twice and 8 bytes: we read 255, libpmix reads 0000000a 00000000 and refuses the 4 bytes left (-20)
        "1410 00000009 00000001 00000006 0000000a 0000000a 00000000 000000ff",
        Some("v12-described-int-size"),
    ),
    (
        "status_int32_tags_in_v12_described_agrees",
        "diff_unpack",
        // STATUS, v12 described: the same with system tags INT32 (09) twice: both read 255
        "1410 00000009 00000001 00000006 00000009 00000009 000000ff",
        None,
    ),
    (
        "darray_size_uint64_in_v20_described_agrees",
        "diff_unpack",
        // DATA_ARRAY, v20 described: size tags UINT64 (000f) twice, size 0: both read it
        "2711 0009 00000001 0027 0000 000f 000f 0000000000000000",
        None,
    ),
];

/// Listed divergences whose named input shows them only when libpmix's
/// heap holds the right garbage (an unzeroed allocation): the input must
/// then agree or show that divergence, nothing else.
const HEAP_DEPENDENT: &[&str] = &["kval-float-null-text"];

/// Each named input runs against fresh children (an input that corrupts
/// libpmix's heap crashes it only from a known state).
fn run_regression(c: &mut LibPmix, name: &str) {
    c.restart();
    let (_, target, hex, want) = REGRESSIONS
        .iter()
        .find(|r| r.0 == name)
        .unwrap_or_else(|| panic!("no regression {name}"));
    let data = pmix_types::hex::decode(&hex.replace(' ', "")).expect("hex");
    let got = match *target {
        "diff_unpack" => diff_unpack(c, &data),
        "diff_encode" => diff_encode(c, &data),
        t => panic!("unknown target {t}"),
    };
    match want {
        // what libpmix answers here depends on its heap: it may agree
        Some(n) if HEAP_DEPENDENT.contains(n) && got == Verdict::Agree => {}
        Some(n) => assert_eq!(got, Verdict::Listed(n), "{name}"),
        None => assert_eq!(got, Verdict::Agree, "{name}"),
    }
}

/// Inputs the fuzzers found, kept as files in corpus/fuzz/diff_unpack/
/// under a name (the replay above runs them too): each must agree.
const NAMED_FILES: &[(&str, &str)] = &[
    (
        "regress-buffer-units-after-the-first-a",
        "BUFFER, v4: the 2026-11-24 campaign's unlisted re-pack divergence (a harness defect: the stride of BUFFER storage, interop/c/common.h)",
    ),
    (
        "regress-buffer-units-after-the-first-b",
        "BUFFER, v4: the second such input",
    ),
    (
        "regress-value-regex-inadequate-space",
        "VALUE, v4: count 19 in 5 bytes, a REGEX value whose string count is 5; libpmix's -19 with no values is its refusal (interop/c/unpack.c), the campaign's largest VALUE class (6029 inputs)",
    ),
    (
        "regress-query-regex-inadequate-space-agrees",
        "QUERY, v4: a qualifier's REGEX string count 2: libpmix's -19 with no items, once taken by unpack.c for success (the 2026-11-24 campaign's unlisted QUERY nqual class)",
    ),
    (
        "regress-info-regex-inadequate-space-agrees",
        "INFO, v4: a REGEX value whose string count libpmix reads as 1610145778: the same -19 (the campaign's unlisted INFO count class)",
    ),
];

/// Inputs the fuzzers found, kept in corpus/fuzz/diff_unpack/ under a name,
/// that must still show a listed divergence (the corpus replay runs them too).
const NAMED_LISTED_FILES: &[(&str, &str, &str)] = &[
    (
        "regress-v20-described-pid-narrow-tag",
        "v20-described-narrow-size",
        "PID, v20 described: a unit of 0 PIDs whose system tag is INT32 (000a), not pid_t's UINT32: libpmix reads no second tag (unpack_pid's size mismatch) and accepts; we want the second tag (the closing campaign's pre-run)",
    ),
    (
        "regress-kval-regex-negative-string-count",
        "negative-count",
        "KVAL, v4: the 23rd KVAL's value is a REGEX whose string count is -50331648 (ff ff ff 2f); libpmix reads no string and re-packs what the unzeroed value held (an empty string here)",
    ),
    (
        "regress-kval-regex-zero-string-count",
        "negative-count",
        "KVAL, v4: the 9th KVAL's value is a REGEX whose string count is 0: libpmix reads no string, as for a negative count",
    ),
    (
        "regress-value-proc-stats-read-late",
        "proc-stats-unpack",
        "VALUE, v41: a PROC_STATS, then units libpmix reads one FLOAT late; the late reading gives libpmix's re-pack exactly",
    ),
    (
        "regress-value-proc-stats-in-a-unit-of-24",
        "proc-stats-unpack",
        "VALUE, v41: a unit of 24 values, the first a PROC_STATS: cut before its processor, the bytes cannot hold the count, so the late reading finds the field by a never-ending varint put after the cut (the closing campaign)",
    ),
    (
        "regress-value-proc-stats-read-late-negative-count",
        "proc-stats-unpack",
        "VALUE, v41: a PROC_STATS; read late, the bytes hold a unit count of -20, which libpmix reads as nothing (negative-count)",
    ),
];

#[test]
fn named_listed_corpus_files_still_show() {
    let Some(mut c) = libpmix() else { return };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/fuzz/diff_unpack");
    for (name, listed, what) in NAMED_LISTED_FILES {
        let data = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        c.restart();
        assert_eq!(
            diff_unpack(&mut c, &data),
            Verdict::Listed(listed),
            "{name} ({what})"
        );
    }
}

/// The late reading of PROC_STATS explains libpmix's answer only when that
/// answer is what libpmix gives reading late: on the named input
/// `value_proc_stats_then_int32_read_late_in_v41`, libpmix's own re-pack (rc
/// 0; the named input checks it live) is explained, a re-pack one byte off,
/// is not, and bytes without a PROC_STATS are not read late.
#[test]
fn proc_stats_late_reading_explains_only_libpmix_answer() {
    use differential::{explain, split, CAnswer, Case};
    let hex = |h: &str| pmix_types::hex::decode(&h.replace(' ', "")).expect("hex");
    let data = hex("1505 023d000c613e6f757400d6520a00000000000000000000000000cccccccccccc9ecc03");
    let (ty, fmt, payload) = split(&data).expect("VALUE, v41");
    let ours = pmix_codec::decode(&fmt, ty, payload);
    assert!(ours.is_err(), "we refuse the count cc cc .. 03");
    // libpmix 4.2.2: one PROC_STATS whose sample_time is (0, cc cc .. 03)
    let theirs = hex("023d000c613e6f757400d6520e0000000000000012302e3030303030300012302e3030303030300012302e303030303030000000cccccccccccc9ecc03");
    let explained = |payload: &[u8],
                     ours: &Result<Vec<pmix_types::Value>, pmix_codec::Error>,
                     repack: Vec<u8>,
                     rc: i32| {
        let theirs = CAnswer::Unpacked {
            rc,
            repack: (rc == 0).then_some(repack),
        };
        explain(&Case {
            fmt,
            ty,
            payload,
            ours,
            theirs: &theirs,
        })
    };
    assert_eq!(
        explained(payload, &ours, theirs.clone(), 0),
        Some("proc-stats-unpack")
    );
    let mut off = theirs.clone();
    *off.last_mut().unwrap() = 0x04;
    assert_eq!(
        explained(payload, &ours, off, 0),
        None,
        "a sample_time libpmix did not read"
    );
    let mut off = theirs.clone();
    off[12] = 0x10;
    assert_eq!(
        explained(payload, &ours, off, 0),
        None,
        "a pid libpmix did not read"
    );
    // libpmix's reading: the byte sent as processor (22) taken for peak_vsize
    let late = differential::proc_stats_as_libpmix_reads(&fmt, ty, payload).expect("a PROC_STATS");
    assert_eq!(late, [&payload[..22], &payload[23..]].concat());
    // no PROC_STATS, no late reading: the same bytes as a PROC_INFO (3b) value
    let mut info = payload.to_vec();
    info[1] = 0x3b;
    assert_eq!(
        differential::proc_stats_as_libpmix_reads(&fmt, ty, &info),
        None
    );
}

#[test]
fn named_corpus_files_agree() {
    let Some(mut c) = libpmix() else { return };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/fuzz/diff_unpack");
    for (name, what) in NAMED_FILES {
        let data = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        c.restart();
        assert_eq!(
            diff_unpack(&mut c, &data),
            Verdict::Agree,
            "{name} ({what})"
        );
    }
}

#[test]
fn every_named_regression_still_shows() {
    let Some(mut c) = libpmix() else { return };
    for (name, ..) in REGRESSIONS {
        run_regression(&mut c, name);
    }
    for (n, reason, _) in KNOWN_DIVERGENCES {
        assert!(
            REGRESSIONS.iter().any(|r| r.3 == Some(*n)),
            "listed divergence {n} ({reason}) has no named input"
        );
    }
}

/// The late reading of PROC_STATS decodes only the cuts after a byte 0 (the
/// end of the rss text before processor): on every diff_unpack corpus
/// input and named regression it finds what decoding at every cut finds.
/// PMIXW_DIFF_EXTRA_CORPUS=DIR checks a campaign's scratch corpus too.
#[test]
fn proc_stats_late_reading_needs_only_cuts_after_a_zero() {
    use differential::{
        proc_stats_as_libpmix_reads, proc_stats_as_libpmix_reads_at_every_cut, split,
    };
    let mut inputs: Vec<Vec<u8>> = corpus("diff_unpack").into_iter().map(|(_, d)| d).collect();
    inputs.extend(
        REGRESSIONS
            .iter()
            .filter(|r| r.1 == "diff_unpack")
            .map(|r| pmix_types::hex::decode(&r.2.replace(' ', "")).expect("hex")),
    );
    if let Some(dir) = std::env::var_os("PMIXW_DIFF_EXTRA_CORPUS") {
        for e in std::fs::read_dir(&dir).expect("PMIXW_DIFF_EXTRA_CORPUS") {
            inputs.push(std::fs::read(e.expect("entry").path()).expect("input"));
        }
    }
    let mut late = 0;
    for data in &inputs {
        let Some((ty, fmt, payload)) = split(data) else {
            continue;
        };
        let view = proc_stats_as_libpmix_reads(&fmt, ty, payload);
        assert_eq!(
            view,
            proc_stats_as_libpmix_reads_at_every_cut(&fmt, ty, payload),
            "{}",
            pmix_types::hex::encode(data)
        );
        late += usize::from(view.is_some());
    }
    eprintln!("{} inputs, {late} read late", inputs.len());
    assert!(late >= 3, "the inputs hold late readings ({late})");
}
