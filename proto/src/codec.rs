//! The gRPC codec of the generated client and server: prost, as `tonic_prost::ProstCodec`,
//! except that a message that does not decode is `INVALID_ARGUMENT` with the decoder's reason
//! (`tonic_prost` says `INTERNAL`, which tells a client its own malformed message is a server
//! fault, and fires alerts on INTERNAL for an attacker's noise; issue 44).

use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// The status of a message that does not decode: the sender's fault.
pub fn malformed(type_name: &str, e: &prost::DecodeError) -> Status {
    let short = type_name.rsplit("::").next().unwrap_or(type_name);
    Status::invalid_argument(format!("malformed {short} message: {e}"))
}

/// Prost encoding and decoding for tonic (see the module documentation).
#[derive(Debug, Clone)]
pub struct ProstCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for ProstCodec<T, U> {
    fn default() -> Self {
        ProstCodec(PhantomData)
    }
}

impl<T, U> Codec for ProstCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstDecoder(PhantomData)
    }
}

/// Encodes `T` with prost.
#[derive(Debug, Clone, Default)]
pub struct ProstEncoder<T>(PhantomData<T>);

impl<T: Message> Encoder for ProstEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // An EncodeBuf grows as needed: encoding cannot run out of space.
        item.encode(buf).map_err(|e| Status::internal(format!("encoding: {e}")))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// Decodes `U` with prost; a malformed message is `INVALID_ARGUMENT`.
#[derive(Debug, Clone, Default)]
pub struct ProstDecoder<U>(PhantomData<U>);

impl<U: Message + Default> Decoder for ProstDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        U::decode(buf).map(Some).map_err(|e| malformed(std::any::type_name::<U>(), &e))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_message_is_the_senders_fault_with_the_reason() {
        // A field 1 (string) whose length runs past the end.
        let e = crate::v1::RegisterRequest::decode(&[0x0a, 0x05, b'a'][..]).unwrap_err();
        let s = malformed(std::any::type_name::<crate::v1::RegisterRequest>(), &e);
        assert_eq!(s.code(), tonic::Code::InvalidArgument);
        assert!(s.message().starts_with("malformed RegisterRequest message: "), "{}", s.message());
    }
}
