// The same ten colours as the exports (moot.export.record.PALETTE), by participant order, so a debater
// keeps its colour on the page, in the HTML export and in the terminal.
export const PALETTE = [
  "#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed",
  "#db2777", "#0891b2", "#65a30d", "#ea580c", "#64748b",
];
export const VOICE_COLOUR = "#475569";
