/**
 * The memory panel: a question box whose answers are cited hits (a click opens the message or
 * paragraph), and below it the memory related to the note open in the editor.
 */

import { ItemView, Notice, TFile, WorkspaceLeaf, debounce } from "obsidian";
import { DaemonClient, Hit, Hits, VaultmindError } from "./api";
import { QUESTION_CHARS, hitTarget, linkText, selectionQuestion, snippet } from "./text";

export const VIEW_TYPE = "vaultmind-memory";

/** Characters of a hit's content shown before "…". */
const SNIPPET_CHARS = 320;

export interface PanelSettings {
  limit: number;
  related: boolean;
}

export class MemoryView extends ItemView {
  private input: HTMLInputElement | null = null; // null until `onOpen` has run
  private waiting: string | undefined; // a question given before that, asked once it has
  private answers!: HTMLElement;
  private relatedBox!: HTMLElement;
  private relatedFor: string | null = null;
  private asked = 0; // a newer question's answer wins over a slower older one
  private readonly refreshRelated = debounce(() => void this.showRelated(), 600, true);

  constructor(
    leaf: WorkspaceLeaf,
    private readonly client: DaemonClient,
    private readonly settings: () => PanelSettings,
    /**
     * told after a question ends, answered or not: the status bar looks again (an answer says
     * the daemon runs, a failure that it stopped or is busy; the bar may say otherwise)
     */
    private readonly onAsked: () => void,
  ) {
    super(leaf);
  }

  getViewType(): string {
    return VIEW_TYPE;
  }

  getDisplayText(): string {
    return "Memory";
  }

  getIcon(): string {
    return "brain-circuit";
  }

  async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("vaultmind-panel");
    const form = root.createEl("form", { cls: "vaultmind-ask" });
    const input = form.createEl("input", {
      type: "search",
      placeholder: "Ask your memory…",
      attr: { "aria-label": "Question" },
    });
    this.input = input;
    form.createEl("button", { text: "Ask", type: "submit" });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.ask(input.value);
    });
    this.answers = root.createDiv({ cls: "vaultmind-answers" });
    this.relatedBox = root.createDiv({ cls: "vaultmind-related" });
    this.registerEvent(this.app.workspace.on("file-open", () => this.refreshRelated()));
    this.registerEvent(this.app.vault.on("modify", (file) => {
      if (file.path === this.relatedFor) this.refreshRelated();
    }));
    void this.showRelated();
    if (this.waiting !== undefined) this.focusQuestion(this.waiting);
  }

  /** Puts `text` in the question box and asks it; before the panel has opened, once it has. */
  focusQuestion(text?: string): void {
    if (this.input === null) {
      this.waiting = text ?? this.waiting ?? "";
      return;
    }
    this.waiting = undefined;
    if (text !== undefined) this.input.value = text;
    this.input.focus();
    if (text) void this.ask(text);
  }

  /**
   * Asks `question` and shows its answers. One longer than the daemon takes is asked by its
   * first words, as a selection is (`selectionQuestion`), and the panel says so: sent whole, it
   * was refused with a hint naming a tool of the daemon's API.
   */
  async ask(question: string): Promise<void> {
    const asked = ++this.asked;
    const typed = question.trim();
    this.answers.empty();
    if (!typed) return;
    const text = typed.length > QUESTION_CHARS ? selectionQuestion(typed) : typed;
    this.answers.createDiv({ cls: "vaultmind-note", text: "Asking…" });
    let found: Hits;
    try {
      found = await this.client.ask(text, this.settings().limit);
    } catch (error) {
      this.onAsked();
      if (asked === this.asked) showError(this.answers, error);
      return;
    }
    this.onAsked();
    if (asked !== this.asked) return;
    this.answers.empty();
    if (text !== typed) {
      const words = text.split(" ").length;
      const part = words > 1 ? `${words.toLocaleString()} words` : `${text.length.toLocaleString()} characters`; // one long word: its start
      const most = QUESTION_CHARS.toLocaleString();
      this.answers.createDiv({ cls: "vaultmind-note", text: `Asked its first ${part}: a question is at most ${most} characters.` });
    }
    if (found.notice) this.answers.createDiv({ cls: "vaultmind-note", text: `Note: ${found.notice}.` });
    const corrected = Object.entries(found.query?.corrected ?? {});
    if (corrected.length) {
      const read = corrected.map(([word, as]) => `“${word}” as “${as}”`).join(", ");
      this.answers.createDiv({ cls: "vaultmind-note", text: `Read ${read}.` });
    }
    const unknown = found.query?.unknown ?? [];
    if (unknown.length) {
      this.answers.createDiv({ cls: "vaultmind-note", text: `No note says: ${unknown.join(", ")}.` });
    }
    this.renderHits(this.answers, found.hits, "Nothing in your memory answers that.");
  }

  /** The settings changed: the related memory is shown again as they now say (on, off, how many). */
  settingsChanged(): void {
    this.refreshRelated();
  }

  /** Closed (the panel, or the plugin disabled): a search not yet sent is not, and no answer still on its way is shown. */
  async onClose(): Promise<void> {
    this.refreshRelated.cancel();
    this.asked++;
    this.relatedFor = null;
  }

  private async showRelated(): Promise<void> {
    const box = this.relatedBox;
    const file = this.app.workspace.getActiveFile();
    if (!this.settings().related || !(file instanceof TFile) || file.extension !== "md") {
      box.empty();
      this.relatedFor = null;
      return;
    }
    this.relatedFor = file.path;
    let found: Hits;
    try {
      const markdown = await this.app.vault.cachedRead(file);
      found = await this.client.related(file.path, file.basename, markdown, this.settings().limit);
    } catch (error) {
      if (this.relatedFor !== file.path) return;
      box.empty();
      box.createEl("h4", { text: "Related memory" });
      showError(box, error);
      return;
    }
    if (this.relatedFor !== file.path) return; // another note was opened meanwhile
    box.empty();
    box.createEl("h4", { text: `Related to ${file.basename}` });
    this.renderHits(box, found.hits, "Nothing else in your memory speaks of this note's subject.");
  }

  /**
   * Opens the hit's note at its block or heading: the file found by its path and the subpath
   * given apart (`hitTarget`), never a link text, which a note named "C# tips" or "Plan | 2024"
   * breaks (and an unresolved link text creates a note). A note gone since it was indexed (a
   * rename the daemon has not seen yet) is said, and nothing is created.
   */
  private async open(hit: Hit, newTab: boolean): Promise<void> {
    const { path, subpath } = hitTarget(hit);
    const file = this.app.vault.getAbstractFileByPath(path); // (getFileByPath: Obsidian 1.5.7+ only)
    if (!(file instanceof TFile)) {
      new Notice(`${path} is no longer in the vault (renamed or deleted since it was indexed)`);
      return;
    }
    await this.app.workspace.getLeaf(newTab).openFile(file, { eState: subpath ? { subpath } : {} });
  }

  private renderHits(box: HTMLElement, hits: Hit[], none: string): void {
    if (!hits.length) {
      box.createDiv({ cls: "vaultmind-note", text: none });
      return;
    }
    const list = box.createEl("ol", { cls: "vaultmind-hits" });
    for (const hit of hits) {
      const item = list.createEl("li", { cls: "vaultmind-hit" });
      const head = item.createDiv({ cls: "vaultmind-hit-head" });
      const link = head.createEl("a", { text: hit.title || hit.note_path, href: "#" });
      link.setAttr("aria-label", `Open ${linkText(hit)}`);
      link.addEventListener("click", (event) => {
        event.preventDefault();
        void this.open(hit, event.ctrlKey || event.metaKey);
      });
      const said = [hit.author, day(hit.time_range.start)].filter(Boolean).join(" · ");
      if (said) head.createSpan({ cls: "vaultmind-hit-meta", text: said });
      const content = hit.content.replace(/\s+/g, " ").trim();
      item.createDiv({ cls: "vaultmind-hit-text", text: snippet(content, SNIPPET_CHARS) });
      item.setAttr("title", `score ${hit.score.toFixed(3)}`);
    }
  }
}

function day(iso: string | null): string {
  return iso ? iso.slice(0, 10) : "";
}

function showError(box: HTMLElement, error: unknown): void {
  box.empty();
  const message = error instanceof Error ? error.message : String(error);
  const shown = box.createDiv({ cls: "vaultmind-error" });
  shown.createDiv({ text: message });
  if (error instanceof VaultmindError && error.hint) {
    shown.createEl("code", { text: error.hint });
  }
}
