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

// JSON.stringify would turn NaN and ±Infinity into null ("keep the default") and drop undefined:
// write them as text, so that the core reports them as issues. BigInt, cycles and objects nested
// too deep for the JS stack throw in JSON.stringify; they become issues too.
function replacer(key, value) {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

function failure(code, field, message) {
  return { ok: false, issues: [{ code, severity: 'error', field, message }] };
}

function wrap(module) {
  // Every call answers a plain object; nothing it is given makes it throw.
  const guard = (run) => {
    try {
      return run();
    } catch (error) {
      return failure('internal_error', 'config', `meshfit could not process the input: ${String(error && error.message)}`);
    }
  };
  // A string longer than the core's limit (in UTF-16 units, so at least as many UTF-8 bytes) is
  // refused here: copying megabytes into the module is what would take the time.
  const tooLong = (string, limit, field) =>
    string.length > limit
      ? failure('input_too_large', field, `${field} is refused: ${string.length} characters exceed the limit of ${limit} bytes.`)
      : null;
  const text = (value, field) => {
    try {
      const json = JSON.stringify(value ?? {}, replacer) ?? 'null';
      const refused = tooLong(json, module.maxJsonBytes, field);
      return refused ? { failed: refused } : { text: json };
    } catch (error) {
      return { failed: failure('input_too_large', field, `the ${field} object cannot be written as JSON: ${String(error && error.message)}`) };
    }
  };
  // Runs `call` on the JSON texts of `values` ([value, field] pairs), or answers why one cannot be written.
  const withTexts = (values, call) => {
    const texts = [];
    for (const [value, field] of values) {
      const converted = text(value, field);
      if (converted.failed) return converted.failed;
      texts.push(converted.text);
    }
    return guard(() => JSON.parse(call(...texts)));
  };
  const asString = (value) => (typeof value === 'string' ? value : String(value));
  // An options argument: absent (undefined or null) is {}; anything but a plain object, or a key the
  // call does not read, is an issue naming it (an as-a-user review saw a typo such as `overides`, a
  // string or an array ignored without a word, and `importLaunchConfig(text, null)` throw).
  const describe = (value) => (Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value);
  const optionsOf = (options, keys, what) => {
    if (options === undefined || options === null) return { options: {} };
    if (typeof options !== 'object' || Array.isArray(options))
      return { failed: failure('unknown_value', 'options', `${what} options must be an object, got ${describe(options)}.`) };
    const unknown = Object.keys(options).filter((key) => !keys.includes(key));
    if (unknown.length > 0)
      return { failed: failure('unknown_field', unknown[0], `${what} option "${unknown[0]}" is not one of ${keys.join(', ')}.`) };
    return { options };
  };
  const searchKeys = ['dp', 'tp', 'pp', 'cp', 'vpp', 'micro_batch', 'zero', 'recompute', 'sp', 'max_dp', 'max_tp', 'max_pp',
    'max_cp', 'max_vpp', 'max_micro_batch', 'memory_limit', 'top', 'budget', 'keep_all', 'spatial_temporal'];
  return Object.freeze({
    /** The meshfit version string. */
    version: module.version(),
    /** Per-rank memory, step-time prediction, resolved config and shareable state. */
    estimate: (config) => withTexts([[config, 'config']], (json) => module.estimate(json)),
    /** Every layout for the GPU count, ranked; options pin (tp: 8) or bound (max_pp: 4) dimensions;
     *  budget caps the work (complete: false and a search_cut_short warning when it stopped early). */
    search: (config, options) => guard(() => {
      const checked = optionsOf(options, searchKeys, 'search');
      return checked.failed ??
        withTexts([[config, 'config'], [checked.options, 'options']], (json, optionsJson) => module.search(json, optionsJson));
    }),
    /** Model and GPU presets. */
    presets: () => guard(() => JSON.parse(module.presets())),
    /** Fine-tuning: every distributed method x full/LoRA/QLoRA, fits ranked by step time, the rest with reasons
     *  (config may carry methods: "full,lora,qlora"). */
    methods: (config) => withTexts([[config, 'config']], (json) => module.methods(json)),
    /** How to make a config fit: the changes that bring it under the tight line, cheapest in speed first,
     *  each with its state (the page's "How to make it fit"; none for a config that fits). */
    fitAdvice: (config) => withTexts([[config, 'config']], (json) => module.fitAdvice(json)),
    /** Every public measured run (tests/data/memory_measured.csv) with its prediction and the median error. */
    validate: () => guard(() => JSON.parse(module.validate())),
    /** Model fields from a pasted Hugging Face config.json (text). */
    parseHfConfig: (configJsonText) => guard(() => {
      const string = asString(configJsonText);
      return tooLong(string, module.maxJsonBytes, 'config.json') ?? JSON.parse(module.parseHfConfig(string));
    }),
    /** The shareable URL state of a config ("v=1&model=...&tp=8"). */
    encodeState: (config) => withTexts([[config, 'config']], (json) => module.encodeState(json)),
    /** A state string (with or without a leading '#') back to a config. */
    decodeState: (state) => guard(() => {
      const string = asString(state);
      return tooLong(string, module.maxStateBytes, 'state') ?? JSON.parse(module.decodeState(string));
    }),
    /**
     * A launch config as text (HF config.json, Megatron-LM command line, torchtitan TOML, DeepSpeed JSON)
     * to config fields. Options: format ('auto' detects it), overrides (config fields over the import),
     * drop_layout (leave out what the layout search chooses).
     */
    importLaunchConfig: (text, options) => guard(() => {
      const checked = optionsOf(options, ['format', 'overrides', 'drop_layout'], 'importLaunchConfig');
      if (checked.failed) return checked.failed;
      const { format = 'auto', overrides = {}, drop_layout = false } = checked.options;
      if (typeof text !== 'string')
        return failure('unknown_value', 'text', `the launch config must be text, got ${describe(text)}.`);
      if (typeof format !== 'string')
        return failure('unknown_value', 'format', `format must be a string, got ${describe(format)}.`);
      if (typeof drop_layout !== 'boolean')
        return failure('unknown_value', 'drop_layout', `drop_layout must be true or false, got ${describe(drop_layout)}.`);
      // Overrides: config fields, or a state string ("v=1&gpus=16") read as {state}.
      const given = typeof overrides === 'string' ? { state: overrides } : overrides ?? {};
      if (typeof given !== 'object' || Array.isArray(given))
        return failure('unknown_value', 'overrides', `overrides must be config fields or a state string, got ${describe(overrides)}.`);
      return tooLong(text, module.maxJsonBytes, 'text') ??
        withTexts([[given, 'overrides']], (json) => module.importLaunchConfig(format, text, json, drop_layout));
    }),
    /** A config as what a framework runs: format 'megatron' | 'torchtitan' | 'deepspeed' | 'hf' | 'torchtune' | 'hf-trainer' | 'meshfit'. */
    exportLaunchConfig: (config, format) =>
      withTexts([[config, 'config']], (json) => module.exportLaunchConfig(json, asString(format))),
  });
}
