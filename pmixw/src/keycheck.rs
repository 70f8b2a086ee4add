//! Values of reserved keys with the wrong type (issue 16 item 5): walks
//! the JSON form of decoded values or messages for `{"key": K, "value":
//! {"type": T, ...}}` pairs and asks `pmix_types::keys::check` about each.
//! Used by `pmixw print`, `inspect` and `doctor`.

#![forbid(unsafe_code)]

use pmix_types::DataType;
use serde_json::Value as Json;

/// One line per reserved key found with a type other than the standard's.
pub fn wrong_types(j: &Json) -> Vec<String> {
    let mut out = Vec::new();
    walk(j, &mut out);
    out
}

fn walk(j: &Json, out: &mut Vec<String>) {
    match j {
        Json::Object(m) => {
            if let (Some(Json::String(k)), Some(Json::String(t))) =
                (m.get("key"), m.get("value").and_then(|v| v.get("type")))
            {
                if let Some(why) = DataType::parse(t).and_then(|t| pmix_types::keys::check(k, t)) {
                    out.push(why);
                }
            }
            m.values().for_each(|v| walk(v, out));
        }
        Json::Array(a) => a.iter().for_each(|v| walk(v, out)),
        _ => {}
    }
}
