//! A rough tokenizer of the preprocessed text, for error recovery only: it
//! finds where tokens start and end (skipping whitespace, comments and the
//! insides of literals) and which brackets are which. The grammar itself
//! never sees these tokens.

/// What a [`Tok`] is, as far as recovery needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// An identifier, keyword or number.
    Word,
    /// A string or character literal.
    Literal,
    /// One punctuation byte (`;`, `{`, `*`, ...; operators of several
    /// bytes are several tokens, which recovery does not mind).
    Punct(u8),
}

/// One token: its kind and byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Tok {
    /// What it is.
    pub kind: Kind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Tok {
    /// True for the punctuation byte `c`.
    pub fn is(&self, c: u8) -> bool {
        self.kind == Kind::Punct(c)
    }

    /// The token's text.
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start..self.end]
    }
}

/// The tokens of `text`, in order.
pub(super) fn tokens(text: &str) -> Vec<Tok> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        let kind = match b {
            _ if b.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = find_from(bytes, i, b"\n").unwrap_or(bytes.len());
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = find_from(bytes, i + 2, b"*/").map_or(bytes.len(), |e| e + 2);
                continue;
            }
            b'"' | b'\'' => {
                i = literal_end(bytes, i);
                Kind::Literal
            }
            _ if is_word_byte(b) => {
                i = word_end(bytes, i);
                Kind::Word
            }
            _ => {
                i += 1;
                Kind::Punct(b)
            }
        };
        out.push(Tok {
            kind,
            start,
            end: i,
        });
    }
    out
}

/// Bytes of identifiers and numbers; every byte of a non-ASCII character
/// counts, so that token ends are character boundaries.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The end of the identifier or number starting at `i` (a number takes its
/// `.`, exponent sign and C++14 digit separators).
fn word_end(bytes: &[u8], mut i: usize) -> usize {
    let number = bytes[i].is_ascii_digit();
    while i < bytes.len() {
        let b = bytes[i];
        let exponent_sign =
            number && matches!(b, b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P');
        let separator = number && matches!(b, b'.' | b'\'');
        if !(is_word_byte(b) || exponent_sign || separator) {
            break;
        }
        i += 1;
    }
    i
}

/// The end of the string or character literal opening at `i`.
fn literal_end(bytes: &[u8], i: usize) -> usize {
    let quote = bytes[i];
    let mut j = i + 1;
    while j < bytes.len() && bytes[j] != quote && bytes[j] != b'\n' {
        j += if bytes[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(bytes.len())
}

/// Where `needle` next occurs at or after `from`.
fn find_from(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_literals_are_not_tokens_of_their_own() {
        let text = "a = 1.5e+3f; // x ;\n/* { */ s = \"; }\" '\\''";
        let toks: Vec<&str> = tokens(text).iter().map(|t| t.text(text)).collect();
        assert_eq!(
            toks,
            ["a", "=", "1.5e+3f", ";", "s", "=", "\"; }\"", "'\\''"]
        );
    }
}
