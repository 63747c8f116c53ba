//! Generates the gRPC code with the `protoc` shipped by `protoc-bin-vendored`: no system
//! install needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    // Our codec: prost's, with a malformed message INVALID_ARGUMENT rather than INTERNAL.
    tonic_prost_build::configure().codec_path("crate::codec::ProstCodec").compile_with_config(
        config,
        &["zeroplay/v1/zeroplay.proto"],
        &["."],
    )?;
    Ok(())
}
