//! A CSV answer (`results.csv`) read into its header and rows, its columns found by name.

/// A CSV's header and rows, every cell as text.
pub struct CsvTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl CsvTable {
    /// Reads `text`, failing the test on a CSV that cannot be read.
    pub fn parse(text: &str) -> Self {
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader
            .headers()
            .expect("a CSV header")
            .iter()
            .map(str::to_string)
            .collect();
        let rows = reader
            .records()
            .map(|row| row.expect("a CSV row").iter().map(str::to_string).collect())
            .collect();
        Self { header, rows }
    }

    /// Where column `name` is, if there is one.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|c| c == name)
    }

    /// Where column `name` is; the test fails, naming the columns, when there is none.
    pub fn column(&self, name: &str) -> usize {
        self.position(name)
            .unwrap_or_else(|| panic!("no column {name}: {:?}", self.header))
    }
}
