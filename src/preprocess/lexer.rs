//! The lexical layer: logical lines and preprocessing tokens.
//!
//! C's translation phases 1–3 happen here in one pass over a file. A *logical
//! line* is what is left of one or more physical lines once backslash-newline
//! splices are removed and comments are replaced by whitespace. Every byte it
//! keeps remembers the file byte it came from, so the translation unit and the
//! diagnostics map back exactly, even across splices and comments.

use std::ops::Range;

/// One logical line of a file, after splicing and comment removal.
#[derive(Debug, Default)]
pub(crate) struct LogicalLine {
    /// The cleaned text.
    pub text: String,
    /// The file bytes the line consumed, including its final newline.
    pub raw: Range<usize>,
    /// File offsets of consumed newlines that `text` does not contain: those
    /// of splices, of comments inside directives, and the line's own newline.
    pub newlines: Vec<usize>,
    /// File offset of a `/*` that is never closed.
    pub unterminated_comment: Option<usize>,
    /// `(text offset, file offset)` where each run of `text` that is
    /// contiguous in the file begins.
    runs: Vec<(usize, usize)>,
    /// For a line made up by the preprocessor (`_Pragma`'s operand): the
    /// file range every offset falls in.
    within: Option<Range<usize>>,
}

impl LogicalLine {
    /// A line that is no text of the file: `text`, said to start at file
    /// offset `within.start`, every offset kept inside `within` (the place
    /// of what it was made from).
    pub fn synthetic(text: String, within: Range<usize>) -> Self {
        LogicalLine {
            text,
            raw: within.start..within.start,
            runs: vec![(0, within.start)],
            within: Some(within),
            ..LogicalLine::default()
        }
    }

    /// The line reduced to its newlines (a skipped line, or a directive
    /// inside macro arguments): no text, and every newline it consumed from
    /// `src`, the text of its file.
    pub fn blanked(&self, src: &str) -> Self {
        let raw = self.raw.clone();
        let newlines = src[raw.clone()]
            .match_indices('\n')
            .map(|(i, _)| raw.start + i)
            .collect();
        LogicalLine {
            raw,
            newlines,
            unterminated_comment: self.unterminated_comment,
            ..LogicalLine::default()
        }
    }

    /// The file offset of text offset `off` (one past the last byte for the end).
    pub fn file_offset(&self, off: usize) -> usize {
        if let Some(w) = &self.within {
            return (w.start + off).min(w.end);
        }
        if self.text.is_empty() {
            return self.raw.start;
        }
        if off >= self.text.len() {
            return self.file_offset(self.text.len() - 1) + 1;
        }
        let i = self.runs.partition_point(|&(t, _)| t <= off) - 1;
        let (t, f) = self.runs[i];
        f + (off - t)
    }

    /// The file range covering text range `r` (splices inside it included).
    pub fn file_range(&self, r: Range<usize>) -> Range<usize> {
        if r.is_empty() {
            let at = self.file_offset(r.start);
            return at..at;
        }
        let end = self.file_offset(r.end - 1) + 1;
        let end = self.within.as_ref().map_or(end, |w| end.min(w.end));
        self.file_offset(r.start)..end
    }

    /// Splits text range `r` into pieces that are contiguous in the file:
    /// `(text range, file offset of its first byte)`.
    pub fn pieces(&self, r: Range<usize>) -> impl Iterator<Item = (Range<usize>, usize)> + '_ {
        self.runs
            .iter()
            .enumerate()
            .filter_map(move |(i, &(t, f))| {
                let run_end = self.runs.get(i + 1).map_or(self.text.len(), |n| n.0);
                let (s, e) = (t.max(r.start), run_end.min(r.end));
                (s < e).then(|| (s..e, f + (s - t)))
            })
    }

    /// Whether the line is a directive (its first token is `#`).
    pub fn is_directive(&self) -> bool {
        // ASCII blanks only, as the tokenizer sees them.
        self.text
            .trim_start_matches(|c: char| c.is_ascii_whitespace())
            .starts_with('#')
    }
}

/// Reads the logical line that starts at file offset `start`; `None` at the
/// end of the file.
pub(crate) fn read_line(src: &str, start: usize) -> Option<LogicalLine> {
    if start >= src.len() {
        return None;
    }
    let mut reader = Reader {
        src: src.as_bytes(),
        pos: start,
        text: Vec::new(),
        line: LogicalLine::default(),
        first: None,
    };
    reader.run();
    let Reader {
        pos,
        text,
        mut line,
        ..
    } = reader;
    // Only whole ASCII sequences are ever removed, so the text stays UTF-8.
    line.text = String::from_utf8(text)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    line.raw = start..pos;
    Some(line)
}

/// The cursor that builds one logical line.
struct Reader<'a> {
    src: &'a [u8],
    pos: usize,
    text: Vec<u8>,
    line: LogicalLine,
    /// The first non-blank byte kept so far; `#` makes the line a directive.
    first: Option<u8>,
}

impl Reader<'_> {
    /// Length of a backslash-newline splice at `at`, 0 if there is none.
    fn splice_len(&self, at: usize) -> usize {
        match (self.src.get(at), self.src.get(at + 1), self.src.get(at + 2)) {
            (Some(b'\\'), Some(b'\n'), _) => 2,
            (Some(b'\\'), Some(b'\r'), Some(b'\n')) => 3,
            _ => 0,
        }
    }

    /// Skips splices at the cursor, remembering their newlines.
    fn skip_splices(&mut self) {
        loop {
            let n = self.splice_len(self.pos);
            if n == 0 {
                return;
            }
            self.line.newlines.push(self.pos + n - 1);
            self.pos += n;
        }
    }

    /// The byte at the cursor, after any splices.
    fn peek(&mut self) -> Option<u8> {
        self.skip_splices();
        self.src.get(self.pos).copied()
    }

    /// The byte after the cursor's, looking through splices without consuming.
    fn peek_next(&self) -> Option<u8> {
        let mut at = self.pos + 1;
        loop {
            let n = self.splice_len(at);
            if n == 0 {
                return self.src.get(at).copied();
            }
            at += n;
        }
    }

    /// Keeps the byte at the cursor and moves past it.
    fn keep(&mut self) {
        let b = self.src[self.pos];
        self.push(b, self.pos);
        self.pos += 1;
    }

    /// Appends `b`, which stands for file byte `at`.
    fn push(&mut self, b: u8, at: usize) {
        if self.first.is_none() && !b.is_ascii_whitespace() {
            self.first = Some(b);
        }
        let len = self.text.len();
        let contiguous = self
            .line
            .runs
            .last()
            .is_some_and(|&(t, f)| f + (len - t) == at);
        if !contiguous {
            self.line.runs.push((len, at));
        }
        self.text.push(b);
    }

    /// Reads up to and including the newline that ends the logical line.
    fn run(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b'\n' => {
                    self.line.newlines.push(self.pos);
                    self.pos += 1;
                    return;
                }
                b'/' if self.peek_next() == Some(b'/') => self.line_comment(),
                b'/' if self.peek_next() == Some(b'*') => self.block_comment(),
                b'"' => self.literal(c),
                b'\'' if !self.after_number() => self.literal(c),
                _ => self.keep(),
            }
        }
    }

    /// Drops a `//` comment, leaving the newline that ends it.
    fn line_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' {
                return;
            }
            self.pos += 1;
        }
    }

    /// Replaces a `/* */` comment by a space (and, outside directives, by
    /// the newlines it contains, so the text after it keeps its line).
    fn block_comment(&mut self) {
        let start = self.pos;
        self.pos += 1;
        self.skip_splices();
        self.pos += 1;
        // The space keeps the tokens on either side of the comment apart.
        self.push(b' ', start);
        let inline = self.first != Some(b'#');
        loop {
            match self.peek() {
                None => {
                    self.line.unterminated_comment = Some(start);
                    return;
                }
                Some(b'*') if self.peek_next() == Some(b'/') => {
                    self.pos += 1;
                    self.skip_splices();
                    self.pos += 1;
                    return;
                }
                Some(b'\n') if inline => self.keep(),
                Some(b'\n') => {
                    self.line.newlines.push(self.pos);
                    self.pos += 1;
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Keeps a string or character literal whole, so that nothing inside it
    /// is taken for a comment. An unterminated one stops at the newline.
    fn literal(&mut self, quote: u8) {
        self.keep();
        while let Some(c) = self.peek() {
            match c {
                b'\n' => return,
                b'\\' => {
                    self.keep();
                    if self.peek().is_some_and(|n| n != b'\n') {
                        self.keep();
                    }
                }
                _ => {
                    self.keep();
                    if c == quote {
                        return;
                    }
                }
            }
        }
    }

    /// Whether the kept text ends inside a number, where `'` is a C++14 digit
    /// separator rather than the start of a character literal.
    fn after_number(&self) -> bool {
        let word_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'\'');
        let start = self
            .text
            .iter()
            .rposition(|&b| !word_byte(b))
            .map_or(0, |i| i + 1);
        let word = &self.text[start..];
        match word.first() {
            Some(b) if b.is_ascii_digit() => true,
            Some(b'.') => word.get(1).is_some_and(u8::is_ascii_digit),
            _ => false,
        }
    }
}

/// What kind of preprocessing token a [`Token`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An identifier or keyword.
    Ident,
    /// A preprocessing number (`1`, `0x1F`, `1.5e-3f`, `1'000`).
    Number,
    /// A string literal.
    Str,
    /// A character literal.
    Char,
    /// An operator or any other single character.
    Punct,
}

/// One preprocessing token of a logical line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// Its kind.
    pub kind: Kind,
    /// Its bytes in the text that was tokenized.
    pub range: Range<usize>,
    /// Whether whitespace precedes it.
    pub space_before: bool,
}

/// Operators of more than one character, longest first so that the longest
/// match wins.
const MULTI_PUNCT: &[&str] = &[
    "<<=", ">>=", "...", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "##", "->", "++", "--",
    "::", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
];

/// Whether `b` can start an identifier (non-ASCII bytes count, so UTF-8
/// identifiers stay whole).
pub(crate) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

/// Whether `b` can continue an identifier.
pub(crate) fn is_ident_continue(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// Splits `text` (a cleaned logical line, or a macro value) into tokens.
pub(crate) fn tokenize(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut space = false;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        let (kind, end) = scan(b, i);
        out.push(Token {
            kind,
            range: i..end,
            space_before: space,
        });
        space = false;
        i = end;
    }
    out
}

/// The kind and end of the token that starts at `i`.
fn scan(b: &[u8], i: usize) -> (Kind, usize) {
    let c = b[i];
    let next_is_digit = b.get(i + 1).is_some_and(u8::is_ascii_digit);
    if is_ident_start(c) {
        let len = b[i..].iter().take_while(|&&x| is_ident_continue(x)).count();
        (Kind::Ident, i + len)
    } else if c.is_ascii_digit() || (c == b'.' && next_is_digit) {
        (Kind::Number, number_end(b, i))
    } else if c == b'"' {
        (Kind::Str, literal_end(b, i))
    } else if c == b'\'' {
        (Kind::Char, literal_end(b, i))
    } else {
        let rest = &b[i..];
        let len = MULTI_PUNCT
            .iter()
            .find(|p| rest.starts_with(p.as_bytes()))
            .map_or(1, |p| p.len());
        (Kind::Punct, i + len)
    }
}

/// The end of the preprocessing number that starts at `i`.
fn number_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        let c = b[j];
        let exponent_sign =
            matches!(c, b'+' | b'-') && matches!(b[j - 1], b'e' | b'E' | b'p' | b'P');
        let separator = c == b'\'' && b.get(j + 1).is_some_and(|&n| is_ident_continue(n));
        if separator {
            j += 2;
        } else if exponent_sign || is_ident_continue(c) || c == b'.' {
            j += 1;
        } else {
            break;
        }
    }
    j
}

/// The end of the string or character literal that starts at `i` (at the
/// end of the text when it is not closed).
fn literal_end(b: &[u8], i: usize) -> usize {
    let quote = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' => return j,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    j.min(b.len())
}
