/**
 * vaultmind for Obsidian: a thin client of the vault's daemon (`vaultmind serve`). It keeps no
 * index of its own: questions, related memory and the index's health all come from the daemon's
 * loopback API, found through the vault's `.vaultmind/daemon.json`.
 */

import {
  App,
  FileSystemAdapter,
  Plugin,
  PluginSettingTab,
  Setting,
  requestUrl,
} from "obsidian";
import { DaemonClient, POLL_MS, Reply, Request, StatusBar, samePath, statusBar } from "./api";
import { selectionQuestion } from "./text";
import { MemoryView, PanelSettings, VIEW_TYPE } from "./view";

const DEFAULTS: PanelSettings = { limit: 10, related: true };

export default class VaultmindPlugin extends Plugin {
  settings: PanelSettings = { ...DEFAULTS };
  private client!: DaemonClient;
  private statusItem!: HTMLElement; // the status bar's item
  private nextPoll: number | undefined; // the status bar's next look at the daemon
  private unloaded = false;

  async onload(): Promise<void> {
    this.settings = { ...DEFAULTS, ...((await this.loadData()) as Partial<PanelSettings> | null) };
    const adapter = this.app.vault.adapter;
    const vaultPath = adapter instanceof FileSystemAdapter ? adapter.getBasePath() : this.app.vault.getName();
    this.client = new DaemonClient(
      async (path) => ((await adapter.exists(path)) ? adapter.read(path) : null),
      send,
      vaultPath,
      undefined,
      undefined,
      async (served) => samePath(await realPath(served), await realPath(vaultPath)),
    );
    this.registerView(
      VIEW_TYPE,
      (leaf) => new MemoryView(leaf, this.client, () => this.settings, () => void this.showHealth()),
    );
    this.addRibbonIcon("brain-circuit", "Open memory", () => void this.openPanel());
    this.addCommand({ id: "open-memory", name: "Open memory panel", callback: () => void this.openPanel() });
    this.addCommand({
      id: "ask-selection",
      name: "Ask memory about the selection",
      editorCallback: (editor) => void this.openPanel(selectionQuestion(editor.getSelection())),
    });
    this.statusItem = this.addStatusBarItem();
    this.statusItem.addClass("mod-clickable");
    this.statusItem.addEventListener("click", () => void this.openPanel());
    this.addSettingTab(new VaultmindSettings(this.app, this));
    this.app.workspace.onLayoutReady(() => void this.showHealth());
    this.register(() => {
      this.unloaded = true;
      window.clearTimeout(this.nextPoll);
    });
  }

  async openPanel(question?: string): Promise<void> {
    let leaf = this.app.workspace.getLeavesOfType(VIEW_TYPE)[0];
    if (!leaf) {
      const right = this.app.workspace.getRightLeaf(false);
      if (!right) return;
      await right.setViewState({ type: VIEW_TYPE, active: true });
      leaf = right;
    }
    // awaited: a leaf in the background is deferred (Obsidian 1.7.2+) until revealed, its view
    // not the panel until then
    await this.app.workspace.revealLeaf(leaf);
    if (leaf.view instanceof MemoryView) leaf.view.focusQuestion(question);
  }

  /**
   * The status bar: the index's health as the daemon reports it, or why there is none. It looks
   * again in a minute, or in a few seconds while the daemon is not running, starting, busy or
   * stopping (`statusBar`), and after each question.
   */
  private async showHealth(): Promise<void> {
    window.clearTimeout(this.nextPoll); // one look due at a time (a question's answer asks for one too)
    let shown: StatusBar;
    try {
      shown = await statusBar(this.client);
    } catch (error) {
      console.error("vaultmind: the status bar failed", error);
      shown = { text: "memory: ⚠", tip: `the plugin could not show the status: ${String(error)}`, nextPollMs: POLL_MS };
    }
    if (this.unloaded) return;
    this.statusItem.setText(shown.text);
    this.statusItem.setAttr("aria-label", shown.tip);
    window.clearTimeout(this.nextPoll);
    this.nextPoll = window.setTimeout(() => void this.showHealth(), shown.nextPollMs);
  }

  /** Saves the settings and applies them to the open panel at once (not only once another note is opened). */
  async saveSettings(): Promise<void> {
    await this.saveData(this.settings);
    for (const leaf of this.app.workspace.getLeavesOfType(VIEW_TYPE)) {
      if (leaf.view instanceof MemoryView) leaf.view.settingsChanged();
    }
  }
}

/**
 * A folder's path with its symlinks resolved, through Node's fs where Obsidian has it (the
 * desktop app, the only one with a folder a daemon can serve); as given elsewhere, or when it
 * cannot be resolved. A vault opened through a symlink is the folder its daemon names.
 */
async function realPath(path: string): Promise<string> {
  const node = (globalThis as { require?: (id: string) => unknown }).require;
  const fs = node?.("fs") as { promises?: { realpath(path: string): Promise<string> } } | undefined;
  try {
    return (await fs?.promises?.realpath(path)) ?? path;
  } catch {
    return path;
  }
}

/** The transport: Obsidian's requestUrl (no CORS in the way), every status returned as it is. */
async function send(request: Request): Promise<Reply> {
  const response = await requestUrl({
    url: request.url,
    method: request.method,
    headers: request.headers,
    body: request.body,
    throw: false,
  });
  return { status: response.status, text: response.text };
}

class VaultmindSettings extends PluginSettingTab {
  constructor(app: App, private readonly plugin: VaultmindPlugin) {
    super(app, plugin);
  }

  display(): void {
    const { containerEl } = this;
    containerEl.empty();
    new Setting(containerEl)
      .setName("Answers shown")
      .setDesc("How many hits a question and the related memory show.")
      .addSlider((slider) =>
        slider
          .setLimits(3, 30, 1)
          .setValue(this.plugin.settings.limit)
          .setDynamicTooltip()
          .onChange(async (value) => {
            this.plugin.settings.limit = value;
            await this.plugin.saveSettings();
          }),
      );
    new Setting(containerEl)
      .setName("Related memory")
      .setDesc("Show what the memory holds about the open note, under the question box.")
      .addToggle((toggle) =>
        toggle.setValue(this.plugin.settings.related).onChange(async (value) => {
          this.plugin.settings.related = value;
          await this.plugin.saveSettings();
        }),
      );
  }
}
