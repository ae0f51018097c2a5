// The `obsidian` module as the built main.js uses it, for the tests: what obsidian.d.ts documents
// of each part the plugin calls, no more. Components run their registered callbacks on unload,
// a view's leaves are closed when its type is unregistered, `debounce` can be cancelled, and
// `requestUrl` sends real HTTP (with Content-Length, as Electron's net does), no timeout.
const http = require("node:http");
const fs = require("node:fs");
const path = require("node:path");

/** An element: the DOM helpers Obsidian adds (createEl, empty, setText…), text kept as text. */
class El {
  constructor(tag) { Object.assign(this, { tag, children: [], attrs: {}, classes: new Set(), listeners: {}, text: "", value: "" }); }
  get textContent() { return this.text + this.children.map((c) => c.textContent).join(""); }
  empty() { this.children = []; this.text = ""; }
  addClass(name) { this.classes.add(name); }
  setText(text) { this.empty(); this.text = String(text); }
  setAttr(key, value) { this.attrs[key] = value; }
  addEventListener(type, listener) { (this.listeners[type] ??= []).push(listener); }
  focus() {}
  createEl(tag, options = {}) {
    const el = new El(tag);
    for (const name of String(options.cls ?? "").split(" ").filter(Boolean)) el.classes.add(name);
    if (options.text !== undefined) el.text = String(options.text);
    Object.assign(el.attrs, options.attr ?? {});
    this.children.push(el);
    return el;
  }
  createDiv(options) { return this.createEl("div", options); }
  createSpan(options) { return this.createEl("span", options); }
  /** The elements under this one with class `name`, in document order. */
  find(name) { return this.children.flatMap((c) => [...(c.classes.has(name) ? [c] : []), ...c.find(name)]); }
}

class Events {
  constructor() { this.handlers = {}; }
  on(name, callback) { const ref = { events: this, name, callback }; (this.handlers[name] ??= []).push(ref); return ref; }
  offref(ref) { this.handlers[ref.name] = (this.handlers[ref.name] ?? []).filter((r) => r !== ref); }
  trigger(name, ...args) { for (const ref of [...(this.handlers[name] ?? [])]) ref.callback(...args); }
}

class Component {
  constructor() { this.loaded = false; this.onUnload = []; }
  load() { if (!this.loaded) { this.loaded = true; this.onload?.(); } }
  unload() { if (this.loaded) { this.loaded = false; for (const callback of this.onUnload.splice(0)) callback(); this.onunload?.(); } }
  register(callback) { this.onUnload.push(callback); }
  registerEvent(ref) { this.register(() => ref.events.offref(ref)); }
}

class TFile {
  constructor(filePath) {
    this.path = filePath;
    this.name = path.posix.basename(filePath);
    this.extension = path.posix.extname(filePath).slice(1);
    this.basename = this.name.slice(0, this.name.length - (this.extension ? this.extension.length + 1 : 0));
  }
}

class FileSystemAdapter {
  constructor(base) { this.base = base; }
  getBasePath() { return this.base; }
  async exists(file) { return fs.existsSync(path.join(this.base, file)); }
  async read(file) { return fs.promises.readFile(path.join(this.base, file), "utf8"); }
}

class Vault extends Events {
  constructor(base) { super(); this.adapter = new FileSystemAdapter(base); }
  getName() { return path.basename(this.adapter.base); }
  async cachedRead(file) { return this.adapter.read(file.path); }
  getAbstractFileByPath(file) { return fs.existsSync(path.join(this.adapter.base, file)) ? new TFile(file) : null; }
}

class WorkspaceLeaf {
  constructor(app) { this.app = app; this.view = null; this.type = null; }
  async setViewState(state) {
    this.type = state.type;
    this.view = this.app.viewTypes[state.type](this);
    this.view.load();
    await this.view.onOpen();
  }
  async openFile(file) { this.app.workspace.activeFile = file; this.app.workspace.trigger("file-open", file); }
}

class Workspace extends Events {
  constructor(app) { super(); this.app = app; this.leaves = []; this.activeFile = null; this.ready = []; }
  onLayoutReady(callback) { this.ready.push(callback); }
  getLeavesOfType(type) { return this.leaves.filter((leaf) => leaf.type === type); }
  getRightLeaf() { const leaf = new WorkspaceLeaf(this.app); this.leaves.push(leaf); return leaf; }
  getLeaf() { return new WorkspaceLeaf(this.app); }
  async revealLeaf() {}
  getActiveFile() { return this.activeFile; }
  /** Opens `file` in the editor, as a click on it does. */
  open(file) { this.activeFile = new TFile(file); this.trigger("file-open", this.activeFile); }
}

class App {
  constructor(base) { this.vault = new Vault(base); this.workspace = new Workspace(this); this.viewTypes = {}; this.statusBar = new El("div"); }
}

class Plugin extends Component {
  constructor(app, manifest) { super(); this.app = app; this.manifest = manifest; this.data = null; }
  async loadData() { return this.data; }
  async saveData(data) { this.data = JSON.parse(JSON.stringify(data)); }
  registerView(type, make) {
    this.app.viewTypes[type] = make;
    this.register(() => {
      delete this.app.viewTypes[type];
      for (const leaf of this.app.workspace.getLeavesOfType(type)) void leaf.view.onClose?.().then(() => leaf.view.unload());
    });
  }
  addRibbonIcon() { return new El("div"); }
  addCommand() {}
  addStatusBarItem() { const item = this.app.statusBar.createDiv(); this.register(() => this.app.statusBar.empty()); return item; }
  addSettingTab() {}
}

class ItemView extends Component {
  constructor(leaf) { super(); this.leaf = leaf; this.app = leaf.app; this.contentEl = new El("div"); }
}

class Notice { constructor(message) { this.message = message; } }
class PluginSettingTab { constructor(app, plugin) { this.app = app; this.plugin = plugin; this.containerEl = new El("div"); } }
class Setting {}

/** obsidian.d.ts: `debounce(cb, timeout, resetTimer)`, a function with `cancel()`. */
function debounce(callback, timeout = 0, resetTimer = false) {
  let timer = null;
  const debounced = (...args) => {
    if (timer !== null && !resetTimer) return debounced;
    clearTimeout(timer);
    timer = setTimeout(() => { timer = null; callback(...args); }, timeout);
    return debounced;
  };
  debounced.cancel = () => { clearTimeout(timer); timer = null; return debounced; };
  return debounced;
}

/** Electron's net as requestUrl uses it: the body sent whole; `throw: false` returns every status. */
function requestUrl(request) {
  return new Promise((resolve, reject) => {
    const url = new URL(request.url);
    const headers = { ...request.headers, ...(request.body !== undefined ? { "Content-Length": Buffer.byteLength(request.body) } : {}) };
    const sent = http.request({ hostname: url.hostname, port: url.port, path: url.pathname, method: request.method, headers }, (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
    });
    sent.on("error", (error) => reject(new Error(`net::${error.code ?? "ERR_FAILED"}`)));
    sent.end(request.body);
  });
}

module.exports = { App, Component, El, FileSystemAdapter, ItemView, Notice, Plugin, PluginSettingTab, Setting, TFile, WorkspaceLeaf, debounce, requestUrl };
