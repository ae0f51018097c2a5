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
import { DaemonClient, Reply, Request, VaultmindError, describeStatus } from "./api";
import { MemoryView, PanelSettings, VIEW_TYPE } from "./view";

const DEFAULTS: PanelSettings = { limit: 10, related: true };
const HEALTH_EVERY_MS = 60_000;

export default class VaultmindPlugin extends Plugin {
  settings: PanelSettings = { ...DEFAULTS };
  private client!: DaemonClient;
  private statusBar!: HTMLElement;

  async onload(): Promise<void> {
    this.settings = { ...DEFAULTS, ...((await this.loadData()) as Partial<PanelSettings> | null) };
    const adapter = this.app.vault.adapter;
    const vaultPath = adapter instanceof FileSystemAdapter ? adapter.getBasePath() : this.app.vault.getName();
    this.client = new DaemonClient(
      async (path) => ((await adapter.exists(path)) ? adapter.read(path) : null),
      send,
      vaultPath,
    );
    this.registerView(VIEW_TYPE, (leaf) => new MemoryView(leaf, this.client, () => this.settings));
    this.addRibbonIcon("brain-circuit", "Open memory", () => void this.openPanel());
    this.addCommand({ id: "open-memory", name: "Open memory panel", callback: () => void this.openPanel() });
    this.addCommand({
      id: "ask-selection",
      name: "Ask memory about the selection",
      editorCallback: (editor) => void this.openPanel(editor.getSelection()),
    });
    this.statusBar = this.addStatusBarItem();
    this.statusBar.addClass("mod-clickable");
    this.statusBar.addEventListener("click", () => void this.openPanel());
    this.addSettingTab(new VaultmindSettings(this.app, this));
    this.app.workspace.onLayoutReady(() => void this.showHealth());
    this.registerInterval(window.setInterval(() => void this.showHealth(), HEALTH_EVERY_MS));
  }

  async openPanel(question?: string): Promise<void> {
    let leaf = this.app.workspace.getLeavesOfType(VIEW_TYPE)[0];
    if (!leaf) {
      const right = this.app.workspace.getRightLeaf(false);
      if (!right) return;
      await right.setViewState({ type: VIEW_TYPE, active: true });
      leaf = right;
    }
    this.app.workspace.revealLeaf(leaf);
    if (leaf.view instanceof MemoryView) leaf.view.focusQuestion(question);
  }

  /** The status bar: the index's health as the daemon reports it, or why there is none. */
  private async showHealth(): Promise<void> {
    let text: string;
    let tip: string;
    try {
      const health = await this.client.health();
      if (!health.ready || health.loading) {
        text = "memory: starting…";
        tip = "the daemon is loading the index; questions are answered once it is ready";
      } else {
        ({ text, tip } = describeStatus(await this.client.status()));
      }
    } catch (error) {
      text = "memory: not running";
      tip = error instanceof VaultmindError && error.hint ? `${error.message}: ${error.hint}` : String(error);
    }
    this.statusBar.setText(text);
    this.statusBar.setAttr("aria-label", tip);
  }

  async saveSettings(): Promise<void> {
    await this.saveData(this.settings);
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
