//! Temporary until float.rs lands.
pub fn format_f32(v: f32) -> String {
    format!("{:.6}", v as f64)
}
pub fn format_f64(v: f64) -> String {
    format!("{:.6}", v)
}
pub fn parse_f32(b: &[u8]) -> Result<f32, ()> {
    std::str::from_utf8(b)
        .map_err(|_| ())?
        .parse()
        .map_err(|_| ())
}
pub fn parse_f64(b: &[u8]) -> Result<f64, ()> {
    std::str::from_utf8(b)
        .map_err(|_| ())?
        .parse()
        .map_err(|_| ())
}
