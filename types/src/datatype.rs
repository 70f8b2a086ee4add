//! `pmix_data_type_t`: every code 0-75 with its standard name.
//!
//! The codes and names are generated from the one type table
//! ([the type table](mod@crate::type_table)), as are the value model, the JSON mapping, the print
//! classes and `pmix-codec`'s pack and unpack dispatch: every operation
//! dispatches on [`DataType`] or [`crate::Value`] with exhaustive matches,
//! so the compiler refuses a type that one operation supports and another
//! forgets.

use std::fmt;

// Generated from the rows of the one type table (`type_table.rs`).
macro_rules! data_types {
    ($( $code:literal $variant:ident $name:literal ( $($inner:ty)? ) $form:ty, $print:ident ; )*) => {
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

crate::type_table!(data_types);

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
