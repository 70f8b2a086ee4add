//! Unsolicited server → client messages: events (tag 0) and forwarded
//! output (tag 2), one row each, generating the struct and its codecs.

use super::field::*;
use super::*;

/// Generates a message struct and its codecs from its fields, in wire
/// order, optionally after a fixed COMMAND.
macro_rules! messages {
    ($(
        $(#[$sm:meta])*
        $S:ident $(after $code:ident)? {
            $( $(#[$fm:meta])* $f:ident : $T:ty = $K:ty ),* $(,)?
        }
    )*) => {$(
        $(#[$sm])*
        #[derive(Clone, Debug, PartialEq)]
        #[cfg_attr(feature = "serde", derive(Serialize))]
        pub struct $S {
            $( $(#[$fm])* pub $f: $T ),*
        }

        impl $S {
            #[doc = concat!(
                "Decode a payload in the connection's format into [`", stringify!($S), "`]",
                $( ", its COMMAND (", stringify!($code), ") first", )?
                "; bytes left after the last field are refused."
            )]
            pub fn decode(fmt: &Format, payload: &[u8]) -> Result<$S> {
                Self::decode_bytes(fmt, Bytes::copy_from_slice(payload))
            }

            /// As `decode`, without copying the payload (byte objects share it).
            pub fn decode_bytes(fmt: &Format, payload: Bytes) -> Result<$S> {
                let mut r = Rd::new(*fmt, &payload);
                $( expect_command(&mut r, cmd::$code, stringify!($code))?; )?
                let m = $S { $( $f: <$K as Kind>::get(&mut r, stringify!($f))? ),* };
                r.finish(stringify!($S))?;
                Ok(m)
            }

            /// The payload bytes in the connection's format (`fmt`), its
            /// fields in wire order.
            pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
                let mut w = Wr::new(*fmt);
                $( One::<CommandI>::put(&mut w, &cmd::$code, "command")?; )?
                $( <$K as Kind>::put(&mut w, &self.$f, stringify!($f))?; )*
                Ok(w.out)
            }
        }
    )*};
}

messages! {
    /// An event the server pushes to a client unsolicited, on tag 0
    /// (protocol.md §5.4 "NOTIFY, server → client"): COMMAND 12, STATUS code,
    /// PROC source, SIZE + INFOs (if > 0), then a DATA_RANGE that the normal
    /// notify path appends and the connect-time replay of cached events omits.
    EventNotice after NOTIFY {
        /// The event's status code (one STATUS; `PMIX_ERR_PROC_ABORTED` …,
        /// or a host-defined code).
        status: i32 = St,
        /// The process the event is about or came from (one PROC).
        source: Proc = One<ProcI>,
        /// Attributes of the event (affected processes, …), SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
        /// The `pmix_data_range_t` the event was notified in (one
        /// DATA_RANGE); absent in the connect-time replay.
        range: Option<u8> = Tail<One<Range>>,
    }

    /// Forwarded output, server → client or tool on tag 2 (protocol.md §5.2
    /// "IOF"; packed by `pmix_iof.c` and `pmix_server_ops.c` of 4.2.2, read by
    /// `client_iof_handler`): the source, the channel, the requester's
    /// reference id, SIZE + INFOs, then the data. An empty tag-2 message (the
    /// socket is closing) is not an `IofData`.
    IofData {
        /// The process whose output this is (one PROC).
        source: Proc = One<ProcI>,
        /// The `pmix_iof_channel_t` the output came on (stdout, stderr …;
        /// one IOF_CHANNEL).
        channel: u16 = One<Channel>,
        /// The reference id the server gave the requester's `PMIx_IOF_pull`
        /// (one SIZE).
        refid: u64 = One<SizeI>,
        /// Attributes of the output (`pmix.iof.tag` …), SIZE + INFOs.
        info: Vec<Info> = Counted<InfoI>,
        /// The output bytes (one BYTE_OBJECT).
        #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
        data: Bytes = One<ByteObj>,
    }

    /// A committed key deleted, server → each other client of the job on
    /// reserved tag 4 (OpenPMIx 7.0; capture
    /// `v7.0.0a1-server_v7.0.0a1-client_delete.txt`, one message per delete
    /// scope, 20 bytes each: spec-notes/pmix7.md).
    DataDelete {
        /// The process whose key it was (one PROC).
        source: Proc = One<ProcI>,
        /// The delete scope (one SCOPE: 5 DEL_LOCAL, 6 DEL_REMOTE,
        /// 7 DEL_GLOBAL, 8 DEL_INTERNAL).
        scope: u8 = One<Scope>,
        /// The deleted key (one STRING).
        key: Option<PString> = One<Str>,
    }
}

/// The fixed COMMAND a message starts with.
fn expect_command(r: &mut Rd, want: u8, name: &str) -> Result<()> {
    let at = r.pos();
    match One::<CommandI>::get(r, "command")? {
        c if c == want => Ok(()),
        c => Err(Error::new(
            ErrorKind::Invalid(format!("tag-0 message with command {c}, not {name}")),
            at,
        )),
    }
}

messages! {
    /// What one byte object of a GET reply holds (and each proc's part of
    /// the modex data): one PROC unit, then KVAL units to the end of the
    /// blob. Decoded from the blob alone, so nothing past it can be read,
    /// and refused if a partial unit is left over.
    ProcData {
        /// The process the data belongs to (one PROC).
        proc: Proc = One<ProcI>,
        /// Its key-value pairs, one KVAL unit each to the end of the blob.
        kvals: Vec<pmix_types::Kval> = UntilEnd<One<KvalI>>,
    }
}

/// The KVALs of one COMMIT blob, in the blob's own buffer type (its type
/// byte: 1 non-described, 2 fully described; v20/v12 send none, and the
/// connection's applies).
pub fn commit_kvals(fmt: &Format, blob: &Buffer) -> Result<Vec<pmix_types::Kval>> {
    let f = Format {
        buffer_type: match blob.buffer_type {
            1 => crate::BufferType::NonDesc,
            2 => crate::BufferType::FullyDesc,
            _ => fmt.buffer_type,
        },
        ..*fmt
    };
    let mut r = Rd::new(f, &blob.bytes);
    let kvals = UntilEnd::<One<KvalI>>::get(&mut r, "kvals")?;
    r.finish("blob")?;
    Ok(kvals)
}
