// The palette is the server's (moot.export.palette, served by GET /api/meta), so a debater keeps its colour on
// the page, in the exports and in the terminal without a copy here. app.js fills it before any page draws;
// importers read these bindings when they draw, so they see the server's values.
export let PALETTE = [];
export let VOICE_COLOUR = "";
// How the formats' own voices are named (moot.domain.config.VOICES: moderator → "Moderator"), drawn in VOICE_COLOUR.
export let VOICE_NAMES = {};

/** Take the palette and the voices' names from the server's /api/meta answer. */
export function usePalette(meta) {
  PALETTE = [...meta.palette];
  VOICE_COLOUR = meta.voice_colour;
  VOICE_NAMES = { ...meta.voices };
}

/** A participant's colour: its own `color` when the config sets one, else the palette's at its place (i), as
 * moot.export.palette.participant_colours gives it to the terminal and the exports. */
export function colourOf(participant, i) {
  return participant?.color || PALETTE[i % PALETTE.length];
}
