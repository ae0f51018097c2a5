/**
 * What the panel shows of a hit and what it asks: a hit's link text and the place a click opens,
 * the best hit of each note, and the questions taken from a note ("related memory") or from a
 * selection, cut to what the API takes. Pure functions: no Obsidian, no daemon.
 */

/** Where a hit sits: its note and the block or heading in it (`Hit`'s two fields). */
export interface Placed {
  note_path: string;
  anchor: string | null;
}

/** Longest question the API takes: it refuses one over 2,000 characters. */
export const QUESTION_CHARS = 2000;

/** Longest text sent as a question for "related memory". */
export const RELATED_QUERY_CHARS = 600;

/**
 * A hit's place as a person reads it (the panel's label of a link): its note and the block
 * (`^m-…`, written `#^m-…`) or heading (`#Heading`) it sits under, as docs/vault-format.md
 * writes anchors. The panel opens `hitTarget`, never this text.
 */
export function linkText(hit: Placed): string {
  const { path, subpath } = hitTarget(hit);
  return path.replace(/\.md$/i, "") + subpath;
}

/** The first (best) hit of each note but the one at `path`, in rank order. */
export function bestOfEachNote<T extends Placed>(hits: T[], path: string): T[] {
  const seen = new Set([path]);
  return hits.filter((hit) => !seen.has(hit.note_path) && seen.add(hit.note_path));
}

/**
 * Where a click on a hit opens: its note's path in the vault and the subpath in it (`#^m-…` for
 * a block, `#Heading` for a heading, "" for the top), given to Obsidian apart. A link text
 * joining them is read back up to its first `#`, `|` or `]`: the note "C# tips" opened as "C".
 */
export function hitTarget(hit: Placed): { path: string; subpath: string } {
  const anchor = hit.anchor ?? "";
  return { path: hit.note_path, subpath: anchor && !anchor.startsWith("#") ? `#${anchor}` : anchor };
}

/**
 * A search text for "memory related to this note": its title, headings and first words, what
 * Obsidian does not show (front matter, `%%` and `<!-- -->` comments), code, links' brackets and
 * markup left out. A hyphen within a word or a date is kept ("Jean-Luc", "2024-03-07").
 */
export function relatedQuery(title: string, markdown: string): string {
  const body = markdown
    .replace(/^---\r?\n(?:[\s\S]*?\r?\n)?---[ \t]*(?:\r?\n|$)/, "")
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/%%[\s\S]*?(?:%%|$)/g, " ")
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/^<!--[\s\S]*/m, " ") // never closed, at a line's start: it hides the rest of the note
    .replace(/!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]/g, (_, target: string, alias?: string) => alias ?? target)
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\^[\w-]+\s*$/gm, "")
    .replace(/[#>*_`~=|]+/g, " ")
    .replace(/(?<![\p{L}\p{N}])-+|-+(?![\p{L}\p{N}])/gu, " ");
  return leadingWords(`${title} ${body}`, RELATED_QUERY_CHARS);
}

/** The selected text as a question: as many of its first words as the API takes. */
export function selectionQuestion(selection: string): string {
  return leadingWords(selection, QUESTION_CHARS);
}

/** `text`'s first words, spaced by one blank, that fit in `limit` characters (a first word longer than that: its start). */
export function leadingWords(text: string, limit: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  let kept = "";
  for (const word of words) {
    if (kept.length + word.length + 1 > limit) break;
    kept = kept ? `${kept} ${word}` : word;
  }
  return kept || (words[0] ?? "").slice(0, limit);
}

/**
 * `text` as a hit's snippet: whole when it has at most `limit` UTF-16 units, else its start,
 * cut between two characters as a reader sees them (never inside an emoji, a surrogate pair or
 * an accent's combining mark), and "…".
 */
export function snippet(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = 0;
  for (const character of graphemes(text.slice(0, limit + GRAPHEME_SLACK))) {
    if (end + character.length > limit) break;
    end += character.length;
  }
  return `${text.slice(0, end)}…`;
}

/** UTF-16 units past a cut read to see whether a character goes on there (an emoji sequence is at most a few dozen). */
const GRAPHEME_SLACK = 64;

/** `text`'s characters as a reader sees them (Intl.Segmenter: Obsidian's Electron has it), else its code points. */
function graphemes(text: string): string[] {
  const Segmenter = (Intl as unknown as { Segmenter?: SegmenterClass }).Segmenter;
  if (Segmenter === undefined) return Array.from(text);
  return Array.from(new Segmenter(undefined, { granularity: "grapheme" }).segment(text), (part) => part.segment);
}

type SegmenterClass = new (
  locale: undefined,
  options: { granularity: "grapheme" },
) => { segment(text: string): Iterable<{ segment: string }> };
