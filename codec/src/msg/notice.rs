//! Unsolicited server → client messages: events (tag 0) and forwarded output (tag 2).

use super::*;

/// An event the server pushes to a client unsolicited, on tag 0
/// (protocol.md §5.4 "NOTIFY, server → client"): COMMAND 12, STATUS code,
/// PROC source, SIZE + INFOs (if > 0), then a DATA_RANGE that the normal
/// notify path appends and the connect-time replay of cached events omits.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct EventNotice {
    /// The event's status code (`PMIX_ERR_PROC_ABORTED` …, or a host-defined code).
    pub status: i32,
    /// The process the event is about or came from.
    pub source: Proc,
    /// Attributes of the event (affected processes, …).
    pub info: Vec<Info>,
    /// The `pmix_data_range_t` the event was notified in; absent in the connect-time replay.
    pub range: Option<u8>,
}

impl EventNotice {
    /// Decode the payload of a tag-0 message, its COMMAND (NOTIFY) first.
    pub fn decode(fmt: &Format, payload: &[u8]) -> Result<EventNotice> {
        Self::decode_bytes(fmt, Bytes::copy_from_slice(payload))
    }

    /// As `decode`, without copying the payload (byte objects share it).
    pub fn decode_bytes(fmt: &Format, payload: Bytes) -> Result<EventNotice> {
        let mut b = DataBuffer::from_bytes(*fmt, payload);
        match one(&mut b, DataType::Command, "command")? {
            Value::Command(cmd::NOTIFY) => {}
            Value::Command(c) => {
                return Err(Error::new(
                    ErrorKind::Invalid(format!("tag-0 message with command {c}, not NOTIFY")),
                    0,
                ))
            }
            other => return Err(unexpected(other)),
        }
        let status = status(&mut b, "status")?;
        let source = match one(&mut b, DataType::Proc, "source")? {
            Value::Proc(p) => *p,
            other => return Err(unexpected(other)),
        };
        let info = infos(counted(&mut b, DataType::Info, "info")?);
        let range = if_more(&mut b, |b| data_range(b, "range"))?;
        all_read(&b, || "bytes after the event's range".into())?;
        Ok(EventNotice {
            status,
            source,
            info,
            range,
        })
    }

    /// The payload bytes of the tag-0 message in `fmt`.
    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut b = DataBuffer::new(*fmt);
        b.pack(DataType::Command, &[Value::Command(cmd::NOTIFY)])?;
        b.pack(DataType::Status, &[Value::Status(self.status)])?;
        b.pack(
            DataType::Proc,
            &[Value::Proc(Box::new(self.source.clone()))],
        )?;
        put_infos(&mut b, &self.info)?;
        if let Some(r) = self.range {
            b.pack(DataType::DataRange, &[Value::DataRange(r)])?;
        }
        Ok(b.as_bytes().to_vec())
    }
}

/// Forwarded output, server → client or tool on tag 2 (protocol.md §5.2
/// "IOF"; packed by `pmix_iof.c` and `pmix_server_ops.c` of 4.2.2, read by
/// `client_iof_handler`): the source, the channel, the requester's
/// reference id, SIZE + INFOs, then the data. An empty tag-2 message (the
/// socket is closing) is not an `IofData`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct IofData {
    /// The process whose output this is.
    pub source: Proc,
    /// The `pmix_iof_channel_t` the output came on (stdout, stderr …).
    pub channel: u16,
    /// The reference id the server gave the requester's `PMIx_IOF_pull`.
    pub refid: u64,
    /// Attributes of the output (`pmix.iof.tag` …).
    pub info: Vec<Info>,
    /// The output bytes.
    #[cfg_attr(feature = "serde", serde(with = "serde_bytes_hex"))]
    pub data: Bytes,
}

impl IofData {
    /// Decode the payload of a tag-2 message.
    pub fn decode(fmt: &Format, payload: &[u8]) -> Result<IofData> {
        Self::decode_bytes(fmt, Bytes::copy_from_slice(payload))
    }

    /// As `decode`, without copying the payload (byte objects share it).
    pub fn decode_bytes(fmt: &Format, payload: Bytes) -> Result<IofData> {
        let mut b = DataBuffer::from_bytes(*fmt, payload);
        let source = match one(&mut b, DataType::Proc, "source")? {
            Value::Proc(p) => *p,
            other => return Err(unexpected(other)),
        };
        let channel = match one(&mut b, DataType::IofChannel, "channel")? {
            Value::IofChannel(c) => c,
            other => return Err(unexpected(other)),
        };
        let refid = size(&mut b, "refid")?;
        let info = infos(counted(&mut b, DataType::Info, "info")?);
        let data = byte_object(&mut b, "data")?;
        all_read(&b, || "bytes after the forwarded data".into())?;
        Ok(IofData {
            source,
            channel,
            refid,
            info,
            data,
        })
    }

    /// The payload bytes of the tag-2 message in `fmt`.
    pub fn encode(&self, fmt: &Format) -> Result<Vec<u8>> {
        let mut b = DataBuffer::new(*fmt);
        b.pack(
            DataType::Proc,
            &[Value::Proc(Box::new(self.source.clone()))],
        )?;
        b.pack(DataType::IofChannel, &[Value::IofChannel(self.channel)])?;
        b.pack(DataType::Size, &[Value::Size(self.refid)])?;
        put_infos(&mut b, &self.info)?;
        put_byte_object(&mut b, &self.data)?;
        Ok(b.as_bytes().to_vec())
    }
}
