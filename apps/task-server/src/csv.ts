/** A small RFC 4180 reader: quoted fields, doubled quotes, CRLF or LF. Enough for the showcase, not a library. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        field += char;
      }
    } else if (char === '"' && field.length === 0) {
      quoted = true;
    } else if (char === ",") {
      row.push(field);
      field = "";
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else {
      field += char;
    }
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((cells) => cells.some((cell) => cell.trim().length > 0));
}

export type ColumnProfile = {
  name: string;
  /** Every non-empty value parses as a number. */
  numeric: boolean;
  filled: number;
};

export type DatasetProfile = {
  rows: number;
  columns: ColumnProfile[];
};

export function profile(table: string[][]): DatasetProfile {
  const [header = [], ...rows] = table;
  const columns = header.map((name, index) => {
    const values = rows.map((row) => (row[index] ?? "").trim()).filter((value) => value.length > 0);
    return { name: name.trim(), numeric: values.length > 0 && values.every(isNumber), filled: values.length };
  });
  return { rows: rows.length, columns };
}

export type ColumnStats = {
  column: string;
  count: number;
  min: number;
  max: number;
  mean: number;
  /** Ten equal-width bins from min to max. */
  histogram: Array<{ from: number; to: number; count: number }>;
};

export function columnStats(table: string[][], column: string): ColumnStats {
  const [header = [], ...rows] = table;
  const index = header.findIndex((name) => name.trim() === column);
  const values = rows
    .map((row) => (row[index] ?? "").trim())
    .filter(isNumber)
    .map(Number);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const width = (max - min) / 10 || 1;
  const histogram = Array.from({ length: 10 }, (_, bin) => ({
    from: min + bin * width,
    to: min + (bin + 1) * width,
    count: 0,
  }));
  for (const value of values) histogram[Math.min(9, Math.floor((value - min) / width))]!.count++;
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return { column, count: values.length, min, max, mean, histogram };
}

function isNumber(value: string): boolean {
  return value.length > 0 && Number.isFinite(Number(value));
}
