//! Plain-text and Markdown tables, for the query commands and the audit report.

/// A table of text cells with a header row.
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new(header: Vec<&'static str>) -> Self {
        Table {
            header,
            rows: Vec::new(),
        }
    }

    /// A row; a cell's newlines show as `⏎`, so each row stays one line.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(
            cells
                .into_iter()
                .map(|c| asof_core::text::one_line(&c).into_owned())
                .collect(),
        );
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Columns aligned with two spaces; the last column is not padded.
    pub fn text(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let last = row.len().saturating_sub(1);
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if i < last {
                    let pad = widths[i].saturating_sub(cell.chars().count()) + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured Markdown table; pipes and newlines in cells are escaped.
    pub fn markdown(&self) -> String {
        let escape = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let mut out = format!("| {} |\n", self.header.join(" | "));
        out.push_str(&format!("|{}\n", "---|".repeat(self.header.len())));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_and_escapes_markdown() {
        let mut t = Table::new(vec!["A", "LONG"]);
        t.row(vec!["x|y".into(), "1".into()]);
        assert_eq!(t.text(), "A    LONG\nx|y  1\n");
        assert_eq!(t.markdown(), "| A | LONG |\n|---|---|\n| x\\|y | 1 |\n");
        // Tool output's newlines never break a row.
        let mut t = Table::new(vec!["ID", "SUMMARY"]);
        t.row(vec!["E1".into(), "Nodes:\n- a\n- b".into()]);
        assert_eq!(t.text(), "ID  SUMMARY\nE1  Nodes:⏎- a⏎- b\n");
    }
}
