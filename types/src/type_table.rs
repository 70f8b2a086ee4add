//! The one table of PMIx data types.
//!
//! One row per `pmix_data_type_t`: wire code, `DataType`/`Value` variant,
//! the standard's `PMIX_` name, the Rust type a [`crate::Value`] holds for
//! it (none for UNDEF and POINTER), the wire form `pmix-codec` packs and
//! unpacks it with, and how libpmix's value printer treats it as a member
//! of a value or an array ([`crate::print::Member`]).
//!
//! [`type_table!`](macro@crate::type_table) hands the rows to a macro of the
//! caller's: this crate generates `DataType` (codes, names, lookups),
//! `Value` and the JSON mapping from them (`datatype.rs`, `value.rs`,
//! `print.rs`); `pmix-codec` generates its pack and unpack dispatch from
//! the same rows (`codec/src/dispatch.rs`). A type added here without a wire
//! form or a print class does not compile, and an operation cannot forget
//! a type: every generated match is exhaustive.
//!
//! The wire-form column names items of `pmix-codec` (`codec/src/layout.rs`);
//! this crate ignores it.

/// Invoke `$m! { rows }` with every row of the type table, in code order:
/// `code Variant "PMIX_NAME" (RustType) WireForm, PrintClass;`
#[macro_export]
macro_rules! type_table {
    ($m:ident) => {
        $m! {
            0 Undef "PMIX_UNDEF" () Nothing, Undef;
            1 Bool "PMIX_BOOL" (bool) BoolF, Top;
            2 Byte "PMIX_BYTE" (u8) U8, Top;
            3 String "PMIX_STRING" (Option<PString>) Str, String;
            4 Size "PMIX_SIZE" (u64) Size, Top;
            5 Pid "PMIX_PID" (u32) Pid, Top;
            6 Int "PMIX_INT" (i32) IntF, Top;
            7 Int8 "PMIX_INT8" (i8) I8, Top;
            8 Int16 "PMIX_INT16" (i16) I16, Top;
            9 Int32 "PMIX_INT32" (i32) I32, Top;
            10 Int64 "PMIX_INT64" (i64) I64, Top;
            11 Uint "PMIX_UINT" (u32) UintF, Top;
            12 Uint8 "PMIX_UINT8" (u8) U8, Top;
            13 Uint16 "PMIX_UINT16" (u16) U16, Top;
            14 Uint32 "PMIX_UINT32" (u32) U32, Top;
            15 Uint64 "PMIX_UINT64" (u64) U64, Top;
            16 Float "PMIX_FLOAT" (F32) FloatF, Top;
            17 Double "PMIX_DOUBLE" (F64) DoubleF, Top;
            18 Timeval "PMIX_TIMEVAL" (Timeval) Tv, Top;
            19 Time "PMIX_TIME" (u64) U64, Top;
            20 Status "PMIX_STATUS" (i32) I32, Top;
            21 Value "PMIX_VALUE" (Box<Value>) Boxed<ValueF>, Unprintable;
            22 Proc "PMIX_PROC" (Box<Proc>) Boxed<ProcF>, Top;
            23 App "PMIX_APP" (Box<App>) Boxed<Lay>, Unprintable;
            24 Info "PMIX_INFO" (Box<Info>) Boxed<Lay>, TopInsideArray;
            25 Pdata "PMIX_PDATA" (Box<Pdata>) Boxed<Lay>, Unprintable;
            26 Buffer "PMIX_BUFFER" (Box<Buffer>) Boxed<Lay>, Unprintable;
            27 ByteObject "PMIX_BYTE_OBJECT" (Box<Hex>) Boxed<HexBlob>, Top;
            28 Kval "PMIX_KVAL" (Box<Kval>) Boxed<Lay>, Unprintable;
            29 Modex "PMIX_MODEX" (Box<Hex>) Boxed<HexBlob>, Unprintable;
            30 Persist "PMIX_PERSIST" (u8) U8, Top;
            31 Pointer "PMIX_POINTER" () Sentinel, Unprintable;
            32 Scope "PMIX_SCOPE" (u8) U8, Top;
            33 DataRange "PMIX_DATA_RANGE" (u8) U8, DataRange;
            34 Command "PMIX_COMMAND" (u8) Cmd, Unprintable;
            35 InfoDirectives "PMIX_INFO_DIRECTIVES" (u32) U32, Unprintable;
            36 DataTypeCode "PMIX_DATA_TYPE" (u16) TypeCode, Unprintable;
            37 ProcState "PMIX_PROC_STATE" (u8) U8, Top;
            38 ProcInfo "PMIX_PROC_INFO" (Box<ProcInfo>) Boxed<Lay>, Top;
            39 DataArray "PMIX_DATA_ARRAY" (Box<DataArray>) Boxed<Darray>, Top;
            40 ProcRank "PMIX_PROC_RANK" (u32) U32, Top;
            41 Query "PMIX_QUERY" (Box<Query>) Boxed<Lay>, Unprintable;
            42 CompressedString "PMIX_COMPRESSED_STRING" (Box<Hex>) Boxed<HexBlob>, Unprintable;
            43 AllocDirective "PMIX_ALLOC_DIRECTIVE" (u8) U8, Top;
            44 InfoArray "PMIX_INFO_ARRAY" (Box<[Info]>) InfoSlice, Unprintable;
            45 IofChannel "PMIX_IOF_CHANNEL" (u16) U16, Unprintable;
            46 Envar "PMIX_ENVAR" (Box<Envar>) Boxed<Lay>, Top;
            47 Coord "PMIX_COORD" (Box<Coord>) Boxed<Lay>, Top;
            48 RegAttr "PMIX_REGATTR" (Box<RegAttr>) Boxed<Lay>, Top;
            49 Regex "PMIX_REGEX" (Box<Regex>) Boxed<RegexF>, Unprintable;
            50 JobState "PMIX_JOB_STATE" (u8) U8, TopOutsideArray;
            51 LinkState "PMIX_LINK_STATE" (u8) U8, Top;
            52 ProcCpuset "PMIX_PROC_CPUSET" (Cpuset) Lay, Unprintable;
            53 Geometry "PMIX_GEOMETRY" (Box<Geometry>) Boxed<Lay>, Top;
            54 DeviceDist "PMIX_DEVICE_DIST" (Box<DeviceDist>) Boxed<Lay>, Top;
            55 Endpoint "PMIX_ENDPOINT" (Box<Endpoint>) Boxed<Lay>, Top;
            56 Topo "PMIX_TOPO" (Box<Topology>) Boxed<TopoF>, Unprintable;
            57 DevType "PMIX_DEVTYPE" (u64) U64, DevType;
            58 LocType "PMIX_LOCTYPE" (u16) U16, TopOutsideArray;
            59 CompressedByteObject "PMIX_COMPRESSED_BYTE_OBJECT" (Box<Hex>) Boxed<HexBlob>, Unprintable;
            60 ProcNspace "PMIX_PROC_NSPACE" (Nspace) NspaceF, Top;
            61 ProcStats "PMIX_PROC_STATS" (Box<ProcStats>) Boxed<Lay>, Unprintable;
            62 DiskStats "PMIX_DISK_STATS" (Box<DiskStats>) Boxed<Lay>, Unprintable;
            63 NetStats "PMIX_NET_STATS" (Box<NetStats>) Boxed<Lay>, Unprintable;
            64 NodeStats "PMIX_NODE_STATS" (Box<NodeStats>) Boxed<Lay>, Unprintable;
            65 DataBuffer "PMIX_DATA_BUFFER" (Box<Hex>) Boxed<HexBlob>, Unprintable;
            66 StorMedium "PMIX_STOR_MEDIUM" (u64) U64, TopOutsideArray;
            67 StorAccess "PMIX_STOR_ACCESS" (u64) U64, TopOutsideArray;
            68 StorPersist "PMIX_STOR_PERSIST" (u64) U64, TopOutsideArray;
            69 StorAccessType "PMIX_STOR_ACCESS_TYPE" (u16) U16, TopOutsideArray;
            70 Device "PMIX_DEVICE" (Box<Device>) Boxed<Lay>, Unprintable;
            71 ResBlockDirective "PMIX_RESBLOCK_DIRECTIVE" (u8) U8, Unprintable;
            72 ResourceUnit "PMIX_RESOURCE_UNIT" (ResourceUnit) Lay, Unprintable;
            73 NodePid "PMIX_NODE_PID" (Box<NodePid>) Boxed<Lay>, Unprintable;
            74 Regex2 "PMIX_REGEX2" (Box<Regex2>) Boxed<Lay>, Unprintable;
            75 AllocInherit "PMIX_ALLOC_INHERIT" (u8) U8, Unprintable;
        }
    };
}
