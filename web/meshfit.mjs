// meshfit.mjs — the JavaScript API of meshfit: load the WebAssembly core once, then call plain
// functions with plain objects. Field names and meanings are those of the CLI's JSON (snake_case);
// bytes are numbers. Nothing throws for bad input: results are {ok: false, issues: [...]}.
//
//   import { load } from './meshfit.mjs';
//   const meshfit = await load();
//   const report = meshfit.estimate({ model: 'llama3.1-70b', gpus: 64, tp: 8, pp: 4, seq: 8192 });
//   if (!report.ok) console.log(report.issues);
import createMeshfitModule from './meshfit_wasm.mjs';

let loading = null;

/** Loads the WebAssembly module (once) and returns the API. `moduleOptions` go to Emscripten. */
export function load(moduleOptions = {}) {
  if (!loading) {
    loading = nodeOptions()
      .then((options) => createMeshfitModule({ ...options, ...moduleOptions }))
      .then(wrap);
  }
  return loading;
}

// Under node, hand Emscripten the .wasm bytes: emcc 3.1.6 would fetch() a file path (node >= 18
// has fetch) and its ES6 output uses CommonJS names in its node branch; newer emsdk needs neither.
async function nodeOptions() {
  if (typeof process !== 'object' || !process.versions || !process.versions.node) return {};
  const { readFile } = await import('node:fs/promises');
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  const path = await import('node:path');
  const here = path.dirname(fileURLToPath(import.meta.url));
  globalThis.__dirname ??= here;
  globalThis.require ??= createRequire(import.meta.url);
  return { wasmBinary: await readFile(path.join(here, 'meshfit_wasm.wasm')) };
}

function wrap(module) {
  const call = (text) => JSON.parse(text);
  const text = (value) => JSON.stringify(value ?? {});
  return Object.freeze({
    /** The meshfit version string. */
    version: module.version(),
    /** Per-rank memory, step-time prediction, resolved config and shareable state. */
    estimate: (config) => call(module.estimate(text(config))),
    /** Every layout for the GPU count, ranked; options pin (tp: 8) or bound (max_pp: 4) dimensions. */
    search: (config, options = {}) => call(module.search(text(config), text(options))),
    /** Fine-tuning: every distributed method x full/LoRA/QLoRA, fits ranked by step time, the rest with reasons
     *  (config may carry methods: "full,lora,qlora"). */
    methods: (config) => call(module.methods(text(config))),
    /** Model and GPU presets. */
    presets: () => call(module.presets()),
    /** Every public measured run (tests/data/memory_measured.csv) with its prediction and the median error. */
    validate: () => call(module.validate()),
    /** Model fields from a pasted Hugging Face config.json (text). */
    parseHfConfig: (configJsonText) => call(module.parseHfConfig(String(configJsonText))),
    /** The shareable URL state of a config ("v=1&model=...&tp=8"). */
    encodeState: (config) => call(module.encodeState(text(config))),
    /** A state string (with or without a leading '#') back to a config. */
    decodeState: (state) => call(module.decodeState(String(state))),
    /**
     * A launch config as text (HF config.json, Megatron-LM command line, torchtitan TOML, DeepSpeed JSON)
     * to config fields. Options: format ('auto' detects it), overrides (config fields over the import),
     * drop_layout (leave out what the layout search chooses).
     */
    importLaunchConfig: (text, { format = 'auto', overrides = {}, drop_layout = false } = {}) =>
      call(module.importLaunchConfig(String(format), String(text), JSON.stringify(overrides ?? {}), Boolean(drop_layout))),
    /** A config as what a framework runs: format 'megatron' | 'torchtitan' | 'deepspeed' | 'hf'. */
    exportLaunchConfig: (config, format) => call(module.exportLaunchConfig(text(config), String(format))),
  });
}
