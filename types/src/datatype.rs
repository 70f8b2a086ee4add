//! `pmix_data_type_t`: every code 0-75 with its standard name.
//!
//! This is the single table of data types. Every operation (pack, unpack,
//! copy, print, compare, JSON) dispatches on [`DataType`], and the
//! exhaustive matches over it in `pmix-codec` make the compiler refuse a
//! type that one operation supports and another forgets.

use std::fmt;

macro_rules! data_types {
    ($( $code:literal $variant:ident $name:literal ; )*) => {
        /// A PMIx data type code (`pmix_data_type_t`, a `uint16_t` in C).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum DataType {
            $(
                #[doc = concat!("`", $name, "`, wire code ", stringify!($code), ".")]
                $variant = $code,
            )*
        }

        impl DataType {
            /// Every defined type, in code order.
            pub const ALL: &'static [DataType] = &[ $( DataType::$variant, )* ];

            /// The type for a wire code, if the code is one of 0-75.
            pub fn from_code(code: u16) -> Option<DataType> {
                match code {
                    $( $code => Some(DataType::$variant), )*
                    _ => None,
                }
            }

            /// The standard's name, as `PMIx_Data_type_string` gives it ("PMIX_BOOL").
            pub fn name(self) -> &'static str {
                match self {
                    $( DataType::$variant => $name, )*
                }
            }
        }
    };
}

data_types! {
    0 Undef "PMIX_UNDEF";
    1 Bool "PMIX_BOOL";
    2 Byte "PMIX_BYTE";
    3 String "PMIX_STRING";
    4 Size "PMIX_SIZE";
    5 Pid "PMIX_PID";
    6 Int "PMIX_INT";
    7 Int8 "PMIX_INT8";
    8 Int16 "PMIX_INT16";
    9 Int32 "PMIX_INT32";
    10 Int64 "PMIX_INT64";
    11 Uint "PMIX_UINT";
    12 Uint8 "PMIX_UINT8";
    13 Uint16 "PMIX_UINT16";
    14 Uint32 "PMIX_UINT32";
    15 Uint64 "PMIX_UINT64";
    16 Float "PMIX_FLOAT";
    17 Double "PMIX_DOUBLE";
    18 Timeval "PMIX_TIMEVAL";
    19 Time "PMIX_TIME";
    20 Status "PMIX_STATUS";
    21 Value "PMIX_VALUE";
    22 Proc "PMIX_PROC";
    23 App "PMIX_APP";
    24 Info "PMIX_INFO";
    25 Pdata "PMIX_PDATA";
    26 Buffer "PMIX_BUFFER";
    27 ByteObject "PMIX_BYTE_OBJECT";
    28 Kval "PMIX_KVAL";
    29 Modex "PMIX_MODEX";
    30 Persist "PMIX_PERSIST";
    31 Pointer "PMIX_POINTER";
    32 Scope "PMIX_SCOPE";
    33 DataRange "PMIX_DATA_RANGE";
    34 Command "PMIX_COMMAND";
    35 InfoDirectives "PMIX_INFO_DIRECTIVES";
    36 DataTypeCode "PMIX_DATA_TYPE";
    37 ProcState "PMIX_PROC_STATE";
    38 ProcInfo "PMIX_PROC_INFO";
    39 DataArray "PMIX_DATA_ARRAY";
    40 ProcRank "PMIX_PROC_RANK";
    41 Query "PMIX_QUERY";
    42 CompressedString "PMIX_COMPRESSED_STRING";
    43 AllocDirective "PMIX_ALLOC_DIRECTIVE";
    44 InfoArray "PMIX_INFO_ARRAY";
    45 IofChannel "PMIX_IOF_CHANNEL";
    46 Envar "PMIX_ENVAR";
    47 Coord "PMIX_COORD";
    48 RegAttr "PMIX_REGATTR";
    49 Regex "PMIX_REGEX";
    50 JobState "PMIX_JOB_STATE";
    51 LinkState "PMIX_LINK_STATE";
    52 ProcCpuset "PMIX_PROC_CPUSET";
    53 Geometry "PMIX_GEOMETRY";
    54 DeviceDist "PMIX_DEVICE_DIST";
    55 Endpoint "PMIX_ENDPOINT";
    56 Topo "PMIX_TOPO";
    57 DevType "PMIX_DEVTYPE";
    58 LocType "PMIX_LOCTYPE";
    59 CompressedByteObject "PMIX_COMPRESSED_BYTE_OBJECT";
    60 ProcNspace "PMIX_PROC_NSPACE";
    61 ProcStats "PMIX_PROC_STATS";
    62 DiskStats "PMIX_DISK_STATS";
    63 NetStats "PMIX_NET_STATS";
    64 NodeStats "PMIX_NODE_STATS";
    65 DataBuffer "PMIX_DATA_BUFFER";
    66 StorMedium "PMIX_STOR_MEDIUM";
    67 StorAccess "PMIX_STOR_ACCESS";
    68 StorPersist "PMIX_STOR_PERSIST";
    69 StorAccessType "PMIX_STOR_ACCESS_TYPE";
    70 Device "PMIX_DEVICE";
    71 ResBlockDirective "PMIX_RESBLOCK_DIRECTIVE";
    72 ResourceUnit "PMIX_RESOURCE_UNIT";
    73 NodePid "PMIX_NODE_PID";
    74 Regex2 "PMIX_REGEX2";
    75 AllocInherit "PMIX_ALLOC_INHERIT";
}

/// `PMIX_DATA_TYPE_MAX`: codes above it belong to host-defined types.
pub const DATA_TYPE_MAX: u16 = 500;

impl DataType {
    /// The numeric wire code.
    pub fn code(self) -> u16 {
        self as u16
    }

    /// The name without the `PMIX_` prefix ("BOOL"), used by the JSON form.
    pub fn short_name(self) -> &'static str {
        &self.name()[5..]
    }

    /// Parse a type name: with or without the `PMIX_` prefix, any case,
    /// or a decimal code ("BOOL", "pmix_info", "24").
    pub fn parse(s: &str) -> Option<DataType> {
        if let Ok(code) = s.parse::<u16>() {
            return DataType::from_code(code);
        }
        let up = s.trim().to_ascii_uppercase();
        let full = if up.starts_with("PMIX_") {
            up
        } else {
            format!("PMIX_{up}")
        };
        DataType::ALL.iter().copied().find(|t| t.name() == full)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `PMIx_Data_type_string`: the name of a code, "UNKNOWN" for codes that
/// are not defined (as libpmix 4.2.2 answers for them).
pub fn data_type_string(code: u16) -> &'static str {
    DataType::from_code(code).map_or("UNKNOWN", DataType::name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_dense_and_round_trip() {
        assert_eq!(DataType::ALL.len(), 76);
        for (i, t) in DataType::ALL.iter().enumerate() {
            assert_eq!(t.code() as usize, i);
            assert_eq!(DataType::from_code(t.code()), Some(*t));
            assert_eq!(DataType::parse(t.name()), Some(*t));
            assert_eq!(DataType::parse(&t.short_name().to_lowercase()), Some(*t));
        }
        assert_eq!(DataType::from_code(76), None);
        assert_eq!(DataType::parse("pmix_info"), Some(DataType::Info));
        assert_eq!(DataType::parse("nope"), None);
    }
}
