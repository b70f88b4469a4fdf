// megatron.cpp — Megatron-LM pretrain_gpt.py command lines, both ways. Flag names, defaults and the
// derived values (ffn default, virtual pipeline size, global batch default) follow
// megatron/training/arguments.py (NVIDIA/Megatron-LM @ d98e8a64) and the layer split
// megatron/core/transformer/transformer_block.py get_num_layers_to_build.
//
// [SECTION] Shell words      — the pasted text split as a POSIX shell would (quotes, \ newlines)
// [SECTION] Flag table       — every flag meshfit reads or knows to be irrelevant to memory
// [SECTION] Import
// [SECTION] Export
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>

#include "io/import_common.h"
#include "memory/memory_model.h"
#include "spec/checked.h"
#include "spec/config_schema.h"
#include "spec/model_spec.h"
#include "spec/structure.h"

namespace meshfit {

using nlohmann::json;
using detail::FieldWriter;

namespace {

// [SECTION] Shell words

// Splits like sh: '...' literal, "..." with \ escapes, \<newline> joins lines, # starts a comment at
// a word's start. Returns false for an unterminated quote.
bool shell_words(const std::string& text, std::vector<std::string>& words) {
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') { ++i; continue; }
      if (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') { i += 2; continue; }
      word += text[++i];
      in_word = true;
    } else if (c == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) return false;
      word += text.substr(i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() && std::string("\"\\$`").find(text[j + 1]) != std::string::npos) ++j;
        word += text[j];
      }
      if (j >= text.size()) return false;
      in_word = true;
      i = j;
    } else if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return true;
}

// Quotes a word for sh only when it needs it.
std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,+@%") ==
                           std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// [SECTION] Flag table

enum class Arity { kSwitch, kValue, kList };  // store_true; one value; nargs='*'
enum class Use { kRead, kIgnored };           // read into the config; known, no effect on memory

struct MegatronFlag {
  const char* name;
  Arity arity;
  Use use;
};

// Flags meshfit reads (kRead) and common flags with no effect on per-GPU memory (kIgnored).
constexpr MegatronFlag kMegatronFlags[] = {
    // Model (read).
    {"--num-layers", Arity::kValue, Use::kRead}, {"--hidden-size", Arity::kValue, Use::kRead},
    {"--ffn-hidden-size", Arity::kValue, Use::kRead}, {"--num-attention-heads", Arity::kValue, Use::kRead},
    {"--group-query-attention", Arity::kSwitch, Use::kRead}, {"--num-query-groups", Arity::kValue, Use::kRead},
    {"--kv-channels", Arity::kValue, Use::kRead}, {"--vocab-size", Arity::kValue, Use::kRead},
    {"--tokenizer-type", Arity::kValue, Use::kRead}, {"--seq-length", Arity::kValue, Use::kRead},
    {"--normalization", Arity::kValue, Use::kRead}, {"--swiglu", Arity::kSwitch, Use::kRead},
    {"--squared-relu", Arity::kSwitch, Use::kRead},
    {"--untie-embeddings-and-output-weights", Arity::kSwitch, Use::kRead},
    {"--disable-bias-linear", Arity::kSwitch, Use::kRead}, {"--add-qkv-bias", Arity::kSwitch, Use::kRead},
    {"--hidden-dropout", Arity::kValue, Use::kRead}, {"--attention-dropout", Arity::kValue, Use::kRead},
    {"--position-embedding-type", Arity::kValue, Use::kRead},
    {"--use-rotary-position-embeddings", Arity::kSwitch, Use::kRead},
    {"--num-experts", Arity::kValue, Use::kRead}, {"--multi-latent-attention", Arity::kSwitch, Use::kRead},
    {"--make-vocab-size-divisible-by", Arity::kValue, Use::kRead},
    // Parallelism (read).
    {"--tensor-model-parallel-size", Arity::kValue, Use::kRead},
    {"--pipeline-model-parallel-size", Arity::kValue, Use::kRead},
    {"--context-parallel-size", Arity::kValue, Use::kRead}, {"--expert-model-parallel-size", Arity::kValue, Use::kRead},
    {"--num-layers-per-virtual-pipeline-stage", Arity::kValue, Use::kRead},
    {"--num-virtual-stages-per-pipeline-rank", Arity::kValue, Use::kRead},
    {"--decoder-first-pipeline-num-layers", Arity::kValue, Use::kRead},
    {"--decoder-last-pipeline-num-layers", Arity::kValue, Use::kRead},
    {"--account-for-embedding-in-pipeline-split", Arity::kSwitch, Use::kRead},
    {"--account-for-loss-in-pipeline-split", Arity::kSwitch, Use::kRead},
    {"--pipeline-model-parallel-layout", Arity::kValue, Use::kRead},
    {"--sequence-parallel", Arity::kSwitch, Use::kRead}, {"--use-distributed-optimizer", Arity::kSwitch, Use::kRead},
    {"--num-distributed-optimizer-instances", Arity::kValue, Use::kRead},
    // Megatron-DeepSpeed (deepspeedai/Megatron-DeepSpeed megatron/arguments.py _add_deepspeed_args via deepspeed.add_config_arguments).
    {"--deepspeed", Arity::kSwitch, Use::kRead}, {"--deepspeed_config", Arity::kValue, Use::kRead},
    {"--deepspeed-config", Arity::kValue, Use::kRead}, {"--zero-stage", Arity::kValue, Use::kRead},
    {"--deepspeed-activation-checkpointing", Arity::kSwitch, Use::kIgnored},
    {"--use-torch-fsdp2", Arity::kSwitch, Use::kRead}, {"--use-custom-fsdp", Arity::kSwitch, Use::kRead},
    {"--use-megatron-fsdp", Arity::kSwitch, Use::kRead},
    // Training (read).
    {"--micro-batch-size", Arity::kValue, Use::kRead}, {"--global-batch-size", Arity::kValue, Use::kRead},
    {"--rampup-batch-size", Arity::kList, Use::kRead}, {"--recompute-granularity", Arity::kValue, Use::kRead},
    {"--recompute-activations", Arity::kSwitch, Use::kRead}, {"--recompute-method", Arity::kValue, Use::kRead},
    {"--recompute-num-layers", Arity::kValue, Use::kRead}, {"--recompute-modules", Arity::kList, Use::kRead},
    {"--distribute-saved-activations", Arity::kSwitch, Use::kRead}, {"--bf16", Arity::kSwitch, Use::kRead},
    {"--fp16", Arity::kSwitch, Use::kRead}, {"--fp8-format", Arity::kValue, Use::kRead},
    {"--fp8-param-gather", Arity::kSwitch, Use::kRead}, {"--optimizer", Arity::kValue, Use::kRead},
    {"--grad-reduce-in-bf16", Arity::kSwitch, Use::kRead},
    {"--accumulate-allreduce-grads-in-fp32", Arity::kSwitch, Use::kRead},
    {"--use-flash-attn", Arity::kSwitch, Use::kRead}, {"--attention-backend", Arity::kValue, Use::kRead},
    {"--cpu-offloading", Arity::kSwitch, Use::kRead}, {"--optimizer-cpu-offload", Arity::kSwitch, Use::kRead},
    {"--optimizer-offload-fraction", Arity::kValue, Use::kRead},
    // Known, no effect on the per-GPU memory or layout meshfit models.
    {"--max-position-embeddings", Arity::kValue, Use::kIgnored}, {"--norm-epsilon", Arity::kValue, Use::kIgnored},
    {"--rotary-base", Arity::kValue, Use::kIgnored}, {"--rotary-percent", Arity::kValue, Use::kIgnored},
    {"--use-rope-scaling", Arity::kSwitch, Use::kIgnored}, {"--rope-scaling-factor", Arity::kValue, Use::kIgnored},
    {"--init-method-std", Arity::kValue, Use::kIgnored}, {"--lr", Arity::kValue, Use::kIgnored},
    {"--min-lr", Arity::kValue, Use::kIgnored}, {"--lr-decay-style", Arity::kValue, Use::kIgnored},
    {"--lr-decay-iters", Arity::kValue, Use::kIgnored}, {"--lr-decay-samples", Arity::kValue, Use::kIgnored},
    {"--lr-warmup-iters", Arity::kValue, Use::kIgnored}, {"--lr-warmup-samples", Arity::kValue, Use::kIgnored},
    {"--lr-warmup-fraction", Arity::kValue, Use::kIgnored}, {"--weight-decay", Arity::kValue, Use::kIgnored},
    {"--clip-grad", Arity::kValue, Use::kIgnored}, {"--adam-beta1", Arity::kValue, Use::kIgnored},
    {"--adam-beta2", Arity::kValue, Use::kIgnored}, {"--adam-eps", Arity::kValue, Use::kIgnored},
    {"--sgd-momentum", Arity::kValue, Use::kIgnored}, {"--train-iters", Arity::kValue, Use::kIgnored},
    {"--train-samples", Arity::kValue, Use::kIgnored}, {"--eval-iters", Arity::kValue, Use::kIgnored},
    {"--eval-interval", Arity::kValue, Use::kIgnored}, {"--save-interval", Arity::kValue, Use::kIgnored},
    {"--log-interval", Arity::kValue, Use::kIgnored}, {"--save", Arity::kValue, Use::kIgnored},
    {"--load", Arity::kValue, Use::kIgnored}, {"--data-path", Arity::kList, Use::kIgnored},
    {"--split", Arity::kValue, Use::kIgnored}, {"--vocab-file", Arity::kValue, Use::kIgnored},
    {"--merge-file", Arity::kValue, Use::kIgnored}, {"--tokenizer-model", Arity::kValue, Use::kIgnored},
    {"--data-cache-path", Arity::kValue, Use::kIgnored}, {"--mock-data", Arity::kSwitch, Use::kIgnored},
    {"--seed", Arity::kValue, Use::kIgnored}, {"--num-workers", Arity::kValue, Use::kIgnored},
    {"--tensorboard-dir", Arity::kValue, Use::kIgnored}, {"--wandb-project", Arity::kValue, Use::kIgnored},
    {"--wandb-exp-name", Arity::kValue, Use::kIgnored}, {"--distributed-backend", Arity::kValue, Use::kIgnored},
    {"--distributed-timeout-minutes", Arity::kValue, Use::kIgnored},
    {"--transformer-impl", Arity::kValue, Use::kRead}, {"--use-mcore-models", Arity::kSwitch, Use::kIgnored},
    {"--ckpt-format", Arity::kValue, Use::kIgnored}, {"--overlap-grad-reduce", Arity::kSwitch, Use::kRead},
    {"--overlap-param-gather", Arity::kSwitch, Use::kRead}, {"--tp-comm-overlap", Arity::kSwitch, Use::kRead},
    {"--no-masked-softmax-fusion", Arity::kSwitch, Use::kIgnored},
    {"--no-bias-gelu-fusion", Arity::kSwitch, Use::kIgnored}, {"--no-bias-swiglu-fusion", Arity::kSwitch, Use::kIgnored},
    {"--no-bias-dropout-fusion", Arity::kSwitch, Use::kIgnored}, {"--no-rope-fusion", Arity::kSwitch, Use::kIgnored},
    {"--no-gradient-accumulation-fusion", Arity::kSwitch, Use::kIgnored},
    {"--no-async-tensor-model-parallel-allreduce", Arity::kSwitch, Use::kIgnored},
    {"--attention-softmax-in-fp32", Arity::kSwitch, Use::kIgnored},
    {"--cross-entropy-loss-fusion", Arity::kSwitch, Use::kIgnored}, {"--manual-gc", Arity::kSwitch, Use::kIgnored},
    {"--manual-gc-interval", Arity::kValue, Use::kIgnored},
    {"--fp8-recipe", Arity::kValue, Use::kIgnored}, {"--fp8-margin", Arity::kValue, Use::kIgnored},
    {"--fp8-amax-history-len", Arity::kValue, Use::kIgnored},
    {"--fp8-amax-compute-algo", Arity::kValue, Use::kIgnored}, {"--log-throughput", Arity::kSwitch, Use::kIgnored},
    {"--timing-log-level", Arity::kValue, Use::kIgnored}, {"--exit-duration-in-mins", Arity::kValue, Use::kIgnored},
    {"--no-load-optim", Arity::kSwitch, Use::kIgnored}, {"--no-load-rng", Arity::kSwitch, Use::kIgnored},
    {"--use-checkpoint-args", Arity::kSwitch, Use::kIgnored},
    {"--overlap-p2p-communication", Arity::kSwitch, Use::kIgnored},
    {"--defer-embedding-wgrad-compute", Arity::kSwitch, Use::kIgnored},
    {"--calculate-per-token-loss", Arity::kSwitch, Use::kIgnored}, {"--qk-layernorm", Arity::kSwitch, Use::kRead},
    {"--apply-layernorm-1p", Arity::kSwitch, Use::kIgnored}, {"--no-persist-layer-norm", Arity::kSwitch, Use::kIgnored},
    {"--use-precision-aware-optimizer", Arity::kSwitch, Use::kIgnored},
    {"--no-create-attention-mask-in-dataloader", Arity::kSwitch, Use::kIgnored},
};

const MegatronFlag* find_flag(const std::string& name) {
  for (const MegatronFlag& flag : kMegatronFlags)
    if (name == flag.name) return &flag;
  return nullptr;
}

// torchrun / torch.distributed.launch flags: the world size comes from here.
constexpr const char* kLauncherValueFlags[] = {"--nproc-per-node", "--nproc_per_node", "--nnodes", "--node-rank",
                                               "--node_rank", "--master-addr", "--master_addr", "--master-port",
                                               "--master_port", "--rdzv-backend", "--rdzv_backend", "--rdzv-endpoint",
                                               "--rdzv_endpoint", "--rdzv-id", "--rdzv_id", "--max-restarts",
                                               "--max_restarts", "--log-dir", "--log_dir", "--redirects", "--tee",
                                               "--num_gpus", "--num_nodes", "--hostfile", "--include", "--exclude"};

// [SECTION] Import

struct ParsedArgs {
  std::map<std::string, std::string> values;           // flag -> value ("" for a switch)
  std::map<std::string, std::vector<std::string>> lists;  // nargs='*' flags
  std::string nproc_per_node, nnodes, world_size;
};

bool is_flag_word(const std::string& word) { return word.size() > 2 && word[0] == '-' && word[1] == '-'; }
bool is_env_assignment(const std::string& word) {
  const size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i)
    if (!(std::isalnum(static_cast<unsigned char>(word[i])) || word[i] == '_')) return false;
  return !std::isdigit(static_cast<unsigned char>(word[0]));
}

void parse_launcher(const std::vector<std::string>& words, size_t end, ParsedArgs& args, FieldWriter& w) {
  for (size_t i = 0; i < end; ++i) {
    std::string name = words[i], value;
    if (!is_flag_word(name)) continue;
    const size_t eq = name.find('=');
    bool takes_value = false;
    for (const char* flag : kLauncherValueFlags) takes_value |= name.substr(0, eq) == flag;
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (takes_value && i + 1 < end) {
      value = words[++i];
    }
    // The deepspeed launcher's --num_gpus / --num_nodes are torchrun's --nproc-per-node / --nnodes.
    if (name == "--nproc-per-node" || name == "--nproc_per_node" || name == "--num_gpus") args.nproc_per_node = value;
    else if (name == "--nnodes" || name == "--num_nodes") args.nnodes = value;
    else if (!takes_value) w.warn(IssueCode::kUnknownField, name, "launcher flag " + quote_text(name) + " is not known to meshfit; ignored.");
  }
}

// Splits the words into launcher, script and flags; fills `args`; reports unknown and repeated flags.
void parse_words(const std::vector<std::string>& words, ParsedArgs& args, FieldWriter& w) {
  size_t start = 0;
  for (; start < words.size() && is_env_assignment(words[start]); ++start)
    if (words[start].rfind("WORLD_SIZE=", 0) == 0) args.world_size = words[start].substr(11);
  size_t script = words.size();
  for (size_t i = start; i < words.size(); ++i)
    if (words[i].size() > 3 && words[i].compare(words[i].size() - 3, 3, ".py") == 0 && !is_flag_word(words[i])) {
      script = i;
      break;
    }
  if (script < words.size()) parse_launcher(words, script, args, w);
  size_t i = script < words.size() ? script + 1 : start;
  while (i < words.size()) {
    std::string name = words[i++];
    if (!is_flag_word(name)) {
      w.warn(IssueCode::kUnknownField, "args", "word " + quote_text(name) + " is not a --flag; ignored.");
      continue;
    }
    std::string value;
    bool has_inline_value = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    const MegatronFlag* flag = find_flag(name);
    if (flag && flag->arity == Arity::kList) {
      std::vector<std::string> items;
      if (has_inline_value) items.push_back(value);
      while (i < words.size() && !is_flag_word(words[i])) items.push_back(words[i++]);
      args.lists[name] = items;
      args.values[name] = "";
      continue;
    }
    const bool wants_value = flag ? flag->arity == Arity::kValue : (i < words.size() && !is_flag_word(words[i]));
    if (wants_value && !has_inline_value) {
      if (i >= words.size() || is_flag_word(words[i])) {
        w.error(IssueCode::kMalformedInput, name, name + " needs a value.");
        continue;
      }
      value = words[i++];
    } else if (!wants_value && has_inline_value) {
      w.warn(IssueCode::kMalformedInput, name, name + " takes no value; " + quote_text(value) + " ignored.");
      value.clear();
    }
    if (!flag) {
      w.warn(IssueCode::kUnknownField, name, quote_text(name) + " is not a pretrain_gpt.py flag meshfit knows; ignored.");
      continue;
    }
    const auto previous = args.values.find(name);
    if (previous != args.values.end() && previous->second != value)
      w.warn(IssueCode::kConflictingSettings, name,
             name + " is given twice (" + quote_text(previous->second) + ", then " + quote_text(value) + "); the last one counts.");
    if (flag->use == Use::kRead) args.values[name] = value;
  }
}

class MegatronReader {
 public:
  MegatronReader(const ParsedArgs& args, FieldWriter& w) : args_(args), w_(w) {}
  bool has(const char* flag) const { return args_.values.count(flag) > 0; }
  const std::string& text(const char* flag) const { return args_.values.at(flag); }
  std::optional<int64_t> count(const char* flag, bool allow_zero = false) const {
    return has(flag) ? w_.count_text(text(flag), flag, allow_zero) : std::nullopt;
  }
  std::optional<double> real(const char* flag) const {
    if (!has(flag)) return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(text(flag).c_str(), &end);
    if (text(flag).empty() || !end || *end != '\0' || !std::isfinite(value)) {
      w_.error(IssueCode::kNotPositive, flag, std::string(flag) + " must be a number, got " + quote_text(text(flag)) + ".");
      return std::nullopt;
    }
    return value;
  }
  // Sets `key` from a count flag.
  std::optional<int64_t> count_into(const char* flag, const char* key) const {
    const auto value = count(flag);
    if (value) w_.set(key, *value, flag);
    return value;
  }

 private:
  const ParsedArgs& args_;
  FieldWriter& w_;
};

void read_model(const MegatronReader& r, FieldWriter& w) {
  // Megatron-LM needs --num-layers, --hidden-size and --num-attention-heads (arguments.py). A command
  // line with none of them (a snippet of parallelism and batch flags) leaves the model to the preset
  // the user picks: Megatron's own defaults for the flags it omits (GeLU, LayerNorm, tied embeddings,
  // biases, dropout) would quietly turn that preset into another model. Only what is written is read.
  const bool architecture = r.has("--num-layers") || r.has("--hidden-size") || r.has("--num-attention-heads");
  if (!architecture)
    w.warn(IssueCode::kMissingModel, "model",
           "the command line has no model flags (--num-layers, --hidden-size, --num-attention-heads): the model stays the "
           "one already chosen (the page's model, or --model), with only the architecture flags written here applied to it.");
  r.count_into("--num-layers", "layers");
  const auto hidden = r.count_into("--hidden-size", "hidden");
  const auto heads = r.count_into("--num-attention-heads", "heads");
  const bool swiglu = r.has("--swiglu");
  if (architecture || swiglu)
    w.set("mlp", enum_key(swiglu ? MlpKind::kSwiGlu : MlpKind::kGelu), swiglu ? "--swiglu" : "no --swiglu (GeLU)");
  if (r.has("--squared-relu"))
    w.warn(IssueCode::kUnsupportedSetting, "mlp", "--squared-relu is counted as the 2-matrix GeLU MLP.");
  if (!r.count_into("--ffn-hidden-size", "ffn") && hidden) {
    // arguments.py: SwiGLU's default keeps the parameter count of a 4h GeLU MLP, in multiples of 64.
    const int64_t ffn = swiglu ? int64_t((4 * *hidden * 2 / 3) / 64) * 64 : 4 * *hidden;
    w.set("ffn", ffn, swiglu ? "--swiglu default ffn (8h/3 rounded down to 64)" : "default ffn (4h)");
  }
  if (r.has("--group-query-attention")) {
    const auto groups = r.has("--num-query-groups") ? r.count("--num-query-groups") : std::optional<int64_t>(1);
    if (groups) w.set("kv_heads", *groups, "--num-query-groups");
  } else if (r.has("--num-query-groups")) {
    w.warn(IssueCode::kConflictingSettings, "kv_heads",
           "--num-query-groups without --group-query-attention is ignored by Megatron-LM: every head keeps its own K/V.");
  }
  if (heads && !r.has("--group-query-attention")) w.set("kv_heads", *heads, "--num-attention-heads (no GQA)");
  // --kv-channels is the head dimension (arguments.py: default hidden_size // num_attention_heads);
  // kept as head_dim only when it differs from that default, so the usual scripts read as before.
  if (const auto channels = r.count("--kv-channels");
      channels && !(hidden && heads && checked_mul(*channels, *heads) == std::optional<int64_t>(*hidden)))
    w.set("head_dim", *channels, "--kv-channels");
  if (!r.count_into("--vocab-size", "vocab") && architecture) {
    if (r.has("--tokenizer-type") && r.text("--tokenizer-type") == "GPT2BPETokenizer") {
      w.set("vocab", 50257, "--tokenizer-type GPT2BPETokenizer (GPT-2 BPE: 50257 tokens)");
    } else {
      w.warn(IssueCode::kMissingModel, "vocab",
             "the vocabulary size comes from the tokenizer, which the command line does not show: give --vocab.");
    }
  }
  if (r.has("--make-vocab-size-divisible-by") && r.text("--make-vocab-size-divisible-by") != "128")
    w.warn(IssueCode::kUnsupportedSetting, "--make-vocab-size-divisible-by",
           "--make-vocab-size-divisible-by " + quote_text(r.text("--make-vocab-size-divisible-by")) +
               ": meshfit pads the vocabulary to Megatron's default multiple of 128 × tp.");
  if (r.has("--normalization")) {
    const std::string word = ascii_lower(r.text("--normalization"));
    if (const auto norm = enum_from_key<NormKind>(word)) w.set("norm", enum_key(*norm), "--normalization");
    else w.error(IssueCode::kUnknownValue, "--normalization",
                 "--normalization " + quote_text(r.text("--normalization")) + " is not LayerNorm or RMSNorm.");
  } else if (architecture) {
    w.set("norm", enum_key(NormKind::kLayerNorm), "Megatron's default --normalization LayerNorm");
  }
  if (architecture || r.has("--untie-embeddings-and-output-weights"))
    w.set("tied_embeddings", !r.has("--untie-embeddings-and-output-weights"), "--untie-embeddings-and-output-weights");
  if (architecture || r.has("--qk-layernorm")) w.set("qk_norm", r.has("--qk-layernorm"), "--qk-layernorm");
  if (architecture || r.has("--disable-bias-linear"))
    w.set("linear_bias", !r.has("--disable-bias-linear"), "--disable-bias-linear");
  if (r.has("--add-qkv-bias"))
    w.warn(IssueCode::kUnsupportedSetting, "--add-qkv-bias", "biases on Q, K and V only are not counted (under 0.01% of parameters).");
  // Megatron's dropout defaults are 0.1 for both.
  const double hidden_dropout = r.real("--hidden-dropout").value_or(0.1);
  const double attention_dropout = r.real("--attention-dropout").value_or(0.1);
  if (architecture || r.has("--hidden-dropout") || r.has("--attention-dropout"))
    w.set("dropout", hidden_dropout > 0 || attention_dropout > 0, "--hidden-dropout/--attention-dropout");
  const bool rope = r.has("--use-rotary-position-embeddings") ||
                    (r.has("--position-embedding-type") && r.text("--position-embedding-type") != "learned_absolute");
  if (!rope && (architecture || r.has("--position-embedding-type")))
    w.warn(IssueCode::kUnsupportedSetting, "--position-embedding-type",
           "learned absolute position embeddings (Megatron's default) add max_position_embeddings × hidden parameters that "
           "meshfit does not count; pass --position-embedding-type rope for Llama-style models.");
  if (r.has("--num-experts"))
    w.error(IssueCode::kUnsupportedSetting, "--num-experts",
            "mixture of experts (--num-experts " + quote_text(r.text("--num-experts")) + ") is not modelled yet.");
  if (r.has("--multi-latent-attention"))
    w.error(IssueCode::kUnsupportedSetting, "--multi-latent-attention", "multi-latent attention is not modelled yet.");
}

// --pipeline-model-parallel-layout (MLM core/transformer/pipeline_parallel_layer_layout.py; FRAMEWORK_NOTES
// §2.6): stages in model order split by '|', E the embedding, t a decoder layer, L the loss, "x*n" and
// "(...)*n" repeats, commas cosmetic. The layers of each stage (chunk), or a message saying why not.
constexpr size_t kMaxLayoutChars = size_t(1) << 16;  // expanded; far above any real model's layers + stages

struct PipelineLayout {
  std::vector<int64_t> layers;  // decoder layers per stage, model order
  std::string problem;          // why the text is not a layout meshfit reads ("" = none)
};

PipelineLayout layout_problem(const std::string& why) {
  PipelineLayout out;
  out.problem = why;
  return out;
}

PipelineLayout parse_pipeline_layout(const std::string& text) {
  std::string flat;
  // One pass: a repeat applies to the symbol or the parenthesised group just before it, already
  // expanded (groups do not nest).
  size_t group_start = std::string::npos, last_start = std::string::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',' || c == ' ' || c == '\t') continue;
    if (c == '(') {
      if (group_start != std::string::npos)
        return layout_problem("a group inside a group is not read here; write the inner repeat out, e.g. (t*2|)*4");
      group_start = flat.size();
      continue;
    }
    if (c == ')') {
      if (group_start == std::string::npos) return layout_problem("a ')' without its '('");
      last_start = group_start;
      group_start = std::string::npos;
      continue;
    }
    if (c == '*') {
      size_t end = i + 1;
      int64_t times = 0;
      while (end < text.size() && text[end] >= '0' && text[end] <= '9' && times <= int64_t(kMaxLayoutChars))
        times = times * 10 + (text[end++] - '0');
      if (end == i + 1 || last_start == std::string::npos || last_start >= flat.size())
        return layout_problem("'*' must follow a symbol or a (group) and give a count");
      const std::string unit = flat.substr(last_start);
      if (times < 1 || times > int64_t(kMaxLayoutChars) || unit.size() * size_t(times) > kMaxLayoutChars)
        return layout_problem("a repeat count out of range");
      for (int64_t k = 1; k < times; ++k) flat += unit;
      last_start = std::string::npos;
      i = end - 1;
      continue;
    }
    if (c != 'E' && c != 't' && c != 'L' && c != '|')
      return layout_problem((c > ' ' && c < 0x7f ? std::string("'") + c + "' is" : std::string("a control or non-ASCII character is")) +
                            " not a symbol meshfit models (E embedding, t decoder layer, L loss; m, an MTP layer, is not modelled)");
    last_start = flat.size();
    flat += c;
    if (flat.size() > kMaxLayoutChars) return layout_problem("the layout is too long");
  }
  if (group_start != std::string::npos) return layout_problem("a '(' without its ')'");
  std::vector<std::string> stages(1);
  for (const char c : flat) {
    if (c == '|') stages.emplace_back();
    else stages.back() += c;
  }
  PipelineLayout out;
  for (size_t k = 0; k < stages.size(); ++k) {
    const std::string& stage = stages[k];
    const auto count = [&](char c) { return int64_t(std::count(stage.begin(), stage.end(), c)); };
    if (count('E') != (k == 0 ? 1 : 0)) return layout_problem("the embedding (E) must be there once, in the first stage");
    if (count('L') != (k + 1 == stages.size() ? 1 : 0)) return layout_problem("the loss (L) must be there once, in the last stage");
    if (count('t') == 0) return layout_problem("a stage without decoder layers is not modelled");
    out.layers.push_back(count('t'));
  }
  return out;
}

// The layout as meshfit's split: vpp = stages / pp, and the first and last chunk's layers where they
// differ from the equal chunks between them (structure.h pipeline_problem). Returns the decoder layers
// it places (0 when refused), checked against the model once the model is known.
int64_t read_pipeline_layout(const MegatronReader& r, FieldWriter& w, int64_t pp, int64_t layers) {
  const char* flag = "--pipeline-model-parallel-layout";
  for (const char* other : {"--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
                            "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
                            "--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank"})
    if (r.has(other)) {
      w.error(IssueCode::kConflictingSettings, flag, std::string(flag) + " and " + other + " exclude each other (arguments.py).");
      return 0;
    }
  const PipelineLayout layout = parse_pipeline_layout(r.text(flag));
  const auto refuse = [&](const std::string& why) {
    w.error(IssueCode::kUnsupportedSetting, flag, std::string(flag) + " " + quote_text(r.text(flag), 60) + ": " + why + ".");
    return int64_t(0);
  };
  if (!layout.problem.empty()) return refuse(layout.problem);
  const std::vector<int64_t>& chunk = layout.layers;
  const int64_t stages = int64_t(chunk.size());
  if (stages % pp != 0)
    return refuse(std::to_string(stages) + (stages == 1 ? " stage is" : " stages are") + " not a multiple of pp=" + std::to_string(pp));
  const int64_t total = std::accumulate(chunk.begin(), chunk.end(), int64_t(0));
  if (layers > 0 && total != layers)
    return refuse(std::to_string(total) + " decoder layers, not the " + std::to_string(layers) + " of --num-layers");
  if (stages > 2 && std::any_of(chunk.begin() + 1, chunk.end() - 1, [&](int64_t n) { return n != chunk[1]; }))
    return refuse("meshfit models equal chunks between an uneven first and last one");
  const int64_t middle = stages > 2 ? chunk[1] : chunk[0];
  w.set("vpp", stages / pp, flag);
  const bool even = chunk.front() == middle && chunk.back() == middle;
  w.set("pp_first_stage_layers", even ? 0 : chunk.front(), flag);
  w.set("pp_last_stage_layers", even ? 0 : chunk.back(), flag);
  return total;
}

// The split from --decoder-first/last-pipeline-num-layers, --account-for-*-in-pipeline-split and the
// virtual-stage flags.
void read_split_flags(const MegatronReader& r, FieldWriter& w, int64_t pp, int64_t layers) {
  const auto first = r.count("--decoder-first-pipeline-num-layers");
  const auto last = r.count("--decoder-last-pipeline-num-layers");
  const bool embedding_split = r.has("--account-for-embedding-in-pipeline-split");
  const bool loss_split = r.has("--account-for-loss-in-pipeline-split");
  if ((first || last) && (embedding_split || loss_split))
    w.error(IssueCode::kConflictingSettings, "--decoder-first-pipeline-num-layers",
            "--decoder-first/last-pipeline-num-layers and --account-for-*-in-pipeline-split exclude each other (arguments.py).");
  int64_t vpp = 1;
  if (const auto per_stage = r.count("--num-layers-per-virtual-pipeline-stage")) {
    if (first || last) {
      w.error(IssueCode::kConflictingSettings, "--num-layers-per-virtual-pipeline-stage",
              "with an uneven split Megatron-LM wants --num-virtual-stages-per-pipeline-rank, not "
              "--num-layers-per-virtual-pipeline-stage.");
    } else if (layers <= 0) {
      w.warn(IssueCode::kMissingModel, "vpp",
             "--num-layers-per-virtual-pipeline-stage needs --num-layers to give the virtual stages: vpp=1 is read; give --vpp "
             "(or --num-virtual-stages-per-pipeline-rank).");
    } else {
      // arguments.py: vpp = (num_layers [+1 embedding] [+1 loss]) / pp / layers_per_virtual_stage.
      const int64_t split_layers = layers + embedding_split + loss_split;
      if (split_layers % pp != 0 || (split_layers / pp) % *per_stage != 0)
        w.error(IssueCode::kVppNotDivideLayers, "--num-layers-per-virtual-pipeline-stage",
                "--num-layers-per-virtual-pipeline-stage " + std::to_string(*per_stage) + " does not divide the " +
                    std::to_string(split_layers) + " layers over pp=" + std::to_string(pp) + " evenly.");
      else vpp = split_layers / pp / *per_stage;
    }
  }
  if (const auto stages = r.count("--num-virtual-stages-per-pipeline-rank")) {
    if (r.has("--num-layers-per-virtual-pipeline-stage") && *stages != vpp)
      w.error(IssueCode::kConflictingSettings, "--num-virtual-stages-per-pipeline-rank",
              "--num-virtual-stages-per-pipeline-rank and --num-layers-per-virtual-pipeline-stage disagree.");
    vpp = *stages;
  }
  w.set("vpp", vpp, "--num-layers-per-virtual-pipeline-stage");
  if ((first || last) && vpp > 1) {
    // Megatron-LM accepts this (arguments.py wants --num-virtual-stages-per-pipeline-rank for it), but
    // transformer_block.py get_num_layers_to_build gives the first rank `first` layers in all and then
    // divides every rank's count by vpp: each of the first rank's vpp chunks holds first/vpp layers.
    // meshfit's uneven split sizes the first and last chunk only, the others equal: the two agree
    // only when nothing is uneven, so the import refuses rather than change the split.
    const char* flag = first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers";
    w.error(IssueCode::kUnsupportedSetting, flag,
            std::string(flag) + " with " + std::to_string(vpp) +
                " virtual stages per rank: Megatron-LM spreads the first/last rank's layers evenly over its vpp chunks "
                "(transformer_block.py get_num_layers_to_build), while meshfit's uneven split sizes only the first and "
                "last chunk; meshfit cannot estimate that split. Drop the flag (an even split) or use vpp 1.");
  } else {
    if (first) w.set("pp_first_stage_layers", *first, "--decoder-first-pipeline-num-layers");
    if (last) w.set("pp_last_stage_layers", *last, "--decoder-last-pipeline-num-layers");
  }
  // The embedding and the loss each count as one layer of the split: the first / last chunk holds one
  // layer fewer than the others (Llama 3 405B: 126 layers + 2 over 16 × 8-layer chunks).
  if ((embedding_split || loss_split) && layers > 0 && pp > 1) {
    const int64_t chunk = (layers + embedding_split + loss_split) / (pp * vpp);
    if (embedding_split) w.set("pp_first_stage_layers", chunk - 1, "--account-for-embedding-in-pipeline-split");
    if (loss_split) w.set("pp_last_stage_layers", chunk - 1, "--account-for-loss-in-pipeline-split");
  }
}

// Returns the decoder layers --pipeline-model-parallel-layout places (0 without the flag).
int64_t read_layout(const MegatronReader& r, FieldWriter& w, const LaunchImport& so_far) {
  const int64_t tp = r.count_into("--tensor-model-parallel-size", "tp").value_or(1);
  const int64_t pp = r.count_into("--pipeline-model-parallel-size", "pp").value_or(1);
  r.count_into("--context-parallel-size", "cp");
  if (!r.has("--tensor-model-parallel-size")) w.set("tp", 1, "Megatron's default tp");
  if (!r.has("--pipeline-model-parallel-size")) w.set("pp", 1, "Megatron's default pp");
  if (!r.has("--context-parallel-size")) w.set("cp", 1, "Megatron's default cp");
  if (const auto ep = r.count("--expert-model-parallel-size"); ep && *ep > 1)
    w.error(IssueCode::kUnsupportedSetting, "--expert-model-parallel-size", "expert parallelism is not modelled yet.");
  const int64_t layers = so_far.fields.value("layers", int64_t(0));
  int64_t layout_layers = 0;
  if (r.has("--pipeline-model-parallel-layout")) layout_layers = read_pipeline_layout(r, w, pp, layers);
  else read_split_flags(r, w, pp, layers);
  const bool sp = r.has("--sequence-parallel");
  w.set("sp", sp, "--sequence-parallel");
  if (sp && tp == 1)
    w.warn(IssueCode::kConflictingSettings, "--sequence-parallel", "--sequence-parallel has no effect at tp=1 (Megatron turns it off).");
  // Megatron-DeepSpeed: --deepspeed hands the optimizer to DeepSpeed at --zero-stage (its own flag,
  // which overrides the JSON's stage) with Megatron's fused kernels; batch, precision and offload sit
  // in the --deepspeed_config JSON, imported on its own.
  if (r.has("--deepspeed")) {
    w.set("framework", enum_key(Framework::kDeepSpeed), "--deepspeed (Megatron-DeepSpeed)");
    w.set("kernels", enum_key(Kernels::kFused), "--deepspeed (Megatron-DeepSpeed's fused Megatron kernels)");
    const auto stage = r.has("--zero-stage") ? r.count("--zero-stage", /*allow_zero=*/true) : std::optional<int64_t>(0);
    if (stage && *stage > 3) w.error(IssueCode::kOutOfRange, "--zero-stage", "--zero-stage must be 0-3.");
    else if (stage) w.set("zero", *stage, "--zero-stage");
    for (const char* config : {"--deepspeed_config", "--deepspeed-config"})
      if (r.has(config))
        w.warn(IssueCode::kUnsupportedSetting, config,
               std::string(config) + " " + quote_text(r.text(config)) +
                   " holds DeepSpeed's batch, precision and offload settings: import that JSON too (its fields go over these).");
  } else {
    w.set("framework", enum_key(Framework::kMegatron), "pretrain_gpt.py");
    w.set("zero", r.has("--use-distributed-optimizer") ? 1 : 0, "--use-distributed-optimizer");
    // Partial distributed optimizer: sharded inside each instance, replicated across them.
    r.count_into("--num-distributed-optimizer-instances", "dp_replicate");
    if (r.has("--zero-stage"))
      w.warn(IssueCode::kConflictingSettings, "--zero-stage", "--zero-stage without --deepspeed does nothing (DeepSpeed is off).");
  }
  for (const char* fsdp : {"--use-torch-fsdp2", "--use-custom-fsdp", "--use-megatron-fsdp"})
    if (r.has(fsdp))
      w.warn(IssueCode::kUnsupportedSetting, fsdp,
             std::string(fsdp) + ": Megatron's FSDP is not modelled; counted as the distributed optimizer (zero=1).");
  return layout_layers;
}

void read_training(const MegatronReader& r, FieldWriter& w, LaunchImport& out) {
  // --transformer-impl local: Megatron's own PyTorch layers without Transformer Engine = kernels eager
  // (the step time's Megatron eager profile); transformer_engine (the default) keeps the fused one.
  if (r.has("--transformer-impl")) {
    const std::string impl = r.text("--transformer-impl");
    if (impl == "local") w.set("kernels", enum_key(Kernels::kEager), "--transformer-impl local");
    else if (impl != "transformer_engine" && impl != "inference_optimized")
      w.error(IssueCode::kUnknownValue, "--transformer-impl",
              "--transformer-impl " + quote_text(impl) + " is not local or transformer_engine.");
  }
  r.count_into("--seq-length", "seq");
  const auto micro = r.count_into("--micro-batch-size", "micro_batch");
  if (!micro) w.set("micro_batch", 1, "Megatron's default --micro-batch-size 1");
  if (!r.count_into("--global-batch-size", "global_batch")) out.batch_per_dp_rank = micro.value_or(1);
  if (r.has("--rampup-batch-size"))
    w.warn(IssueCode::kUnsupportedSetting, "--rampup-batch-size", "batch-size ramp-up: meshfit estimates the final global batch.");
  // Recompute.
  Recompute recompute = Recompute::kNone;
  if (r.has("--recompute-activations")) recompute = Recompute::kSelective;  // arguments.py: = granularity selective
  if (r.has("--recompute-granularity")) {
    const auto parsed = enum_from_key<Recompute>(r.text("--recompute-granularity"));
    if (!parsed || *parsed == Recompute::kNone) {
      w.error(IssueCode::kUnknownValue, "--recompute-granularity",
              "--recompute-granularity " + quote_text(r.text("--recompute-granularity")) + " is not full or selective.");
    } else {
      if (r.has("--recompute-activations") && *parsed != Recompute::kSelective)
        w.warn(IssueCode::kConflictingSettings, "--recompute-granularity",
               "--recompute-activations means selective, --recompute-granularity says full; full is used.");
      recompute = *parsed;
    }
  }
  w.set("recompute", enum_key(recompute), "--recompute-granularity");
  if (recompute == Recompute::kFull) {
    const std::string method = r.has("--recompute-method") ? r.text("--recompute-method") : "";
    const int64_t count = r.count("--recompute-num-layers").value_or(1);
    // block: the first N layers of each stage's chunk recompute, the others keep every activation
    // (transformer_block.py _checkpointed_forward) = recompute_layers N.
    if (method == "block")
      w.set("recompute_layers", count, "--recompute-method block --recompute-num-layers");
    else if (count > 1)
      w.warn(IssueCode::kUnsupportedSetting, "--recompute-num-layers",
             "uniform recompute of " + std::to_string(count) + "-layer groups is counted as per-layer full recompute.");
  }
  // Communication overlap: plain Megatron-LM leaves both off (arguments.py store_true flags), so a
  // command line without them runs its gradient sync after the backward, whatever meshfit's auto
  // (Megatron-Bridge/NeMo recipes: on) would assume.
  const bool grad_overlap = r.has("--overlap-grad-reduce"), param_overlap = r.has("--overlap-param-gather");
  w.set("dp_comm_overlap", grad_overlap ? "on" : "off",
        grad_overlap ? "--overlap-grad-reduce" : "no --overlap-grad-reduce (Megatron-LM's default: off)");
  if (param_overlap && !grad_overlap)
    w.warn(IssueCode::kUnsupportedSetting, "--overlap-param-gather",
           "--overlap-param-gather without --overlap-grad-reduce: meshfit models one overlap setting (off here).");
  if (r.has("--tp-comm-overlap")) w.set("tp_comm_overlap", true, "--tp-comm-overlap");
  if (r.has("--distribute-saved-activations"))
    w.warn(IssueCode::kUnsupportedSetting, "--distribute-saved-activations", "distributing saved activations over TP is not modelled.");
  // Precision.
  if (r.has("--bf16") && r.has("--fp16"))
    w.error(IssueCode::kConflictingSettings, "--fp16", "--bf16 and --fp16 exclude each other.");
  if (!r.has("--bf16") && !r.has("--fp16"))
    w.warn(IssueCode::kUnsupportedSetting, "precision",
           "no --bf16 or --fp16: Megatron-LM would train in fp32; meshfit counts bf16 mixed precision.");
  if (r.has("--fp16"))
    w.warn(IssueCode::kUnsupportedSetting, "--fp16", "fp16 is counted like bf16 (same bytes; the loss scaler is negligible).");
  w.set("precision", enum_key(r.has("--fp8-format") ? Precision::kFp8 : Precision::kBf16), "--fp8-format");
  if (r.has("--fp8-param-gather")) w.set("fp8_all_gather", true, "--fp8-param-gather");
  if (r.has("--optimizer")) {
    if (const auto optimizer = enum_from_key<Optimizer>(r.text("--optimizer"))) w.set("optimizer", enum_key(*optimizer), "--optimizer");
    else w.error(IssueCode::kUnknownValue, "--optimizer", "--optimizer " + quote_text(r.text("--optimizer")) + " is not adam or sgd.");
  } else {
    w.set("optimizer", enum_key(Optimizer::kAdamW), "Megatron's default --optimizer adam");
  }
  if (r.has("--grad-reduce-in-bf16") && r.has("--accumulate-allreduce-grads-in-fp32"))
    w.warn(IssueCode::kConflictingSettings, "--grad-reduce-in-bf16", "--grad-reduce-in-bf16 and --accumulate-allreduce-grads-in-fp32 disagree; bf16 is used.");
  w.set("fp32_grad_buffer", !r.has("--grad-reduce-in-bf16"), "--grad-reduce-in-bf16");
  bool flash = true;  // Megatron's default attention backend is TE's fused/flash attention
  if (r.has("--attention-backend")) {
    const std::string& backend = r.text("--attention-backend");
    if (backend == "unfused" || backend == "local") flash = false;
    else if (backend != "flash" && backend != "fused" && backend != "auto")
      w.warn(IssueCode::kUnknownValue, "--attention-backend", "--attention-backend " + quote_text(backend) + " is not known; flash assumed.");
  }
  w.set("flash", flash, "--attention-backend");
  if (r.has("--cpu-offloading"))
    w.warn(IssueCode::kUnsupportedSetting, "--cpu-offloading",
           "--cpu-offloading (Transformer Engine's activation and weight offload) is not modelled (GPU memory overestimated).");
  // --optimizer-cpu-offload: the distributed optimizer's shard on the CPU (memory_model.cpp's
  // profile). A fraction below 1 (--optimizer-offload-fraction) keeps part of it on the GPU, which
  // meshfit cannot split: counted on the GPU rather than under-counted.
  if (r.has("--optimizer-cpu-offload")) {
    const std::optional<double> fraction = r.has("--optimizer-offload-fraction") ? r.real("--optimizer-offload-fraction") : 1.0;
    if (fraction && *fraction == 1.0)
      w.set("offload", enum_key(Offload::kOptimizer), "--optimizer-cpu-offload");
    else if (fraction)
      w.warn(IssueCode::kUnsupportedSetting, "--optimizer-offload-fraction",
             "--optimizer-offload-fraction " + r.text("--optimizer-offload-fraction") +
                 ": a partial optimizer offload is not modelled; the whole optimizer is counted on the GPU (GPU memory overestimated).");
  }
}

void read_world_size(const ParsedArgs& args, FieldWriter& w) {
  // torchrun's --nproc-per-node gpu/cpu/auto: every device of the node, a count only the node knows.
  const bool per_node_word = args.nproc_per_node == "gpu" || args.nproc_per_node == "auto" || args.nproc_per_node == "cpu";
  if (per_node_word)
    w.warn(IssueCode::kMissingModel, "gpus",
           "--nproc-per-node " + args.nproc_per_node + " starts one process per device of the node: give --gpus and --gpus-per-node.");
  if (!args.nproc_per_node.empty() && !per_node_word) {
    const auto per_node = w.count_text(args.nproc_per_node, "--nproc-per-node");
    std::optional<int64_t> nodes = int64_t(1);
    if (!args.nnodes.empty()) {
      if (args.nnodes.find(':') != std::string::npos) {
        w.warn(IssueCode::kUnsupportedSetting, "--nnodes", "elastic --nnodes " + quote_text(args.nnodes) + ": the smallest node count is used.");
        nodes = w.count_text(args.nnodes.substr(0, args.nnodes.find(':')), "--nnodes");
      } else {
        nodes = w.count_text(args.nnodes, "--nnodes");
      }
    }
    int64_t gpus = 0;
    if (per_node && nodes && __builtin_mul_overflow(*per_node, *nodes, &gpus)) {
      w.error(IssueCode::kOutOfRange, "--nnodes", "--nnodes × --nproc-per-node overflows.");
    } else if (per_node && nodes) {
      w.set("gpus_per_node", *per_node, "--nproc-per-node");
      w.set("gpus", gpus, "--nnodes × --nproc-per-node");
    }
  }
  if (!args.world_size.empty())
    if (const auto world = w.count_text(args.world_size, "WORLD_SIZE")) w.set("gpus", *world, "WORLD_SIZE");
  if (!w.has("gpus"))
    w.warn(IssueCode::kMissingModel, "gpus",
           "the command line does not give the world size (torchrun --nnodes/--nproc-per-node or WORLD_SIZE): give --gpus.");
}

}  // namespace

LaunchImport import_megatron_args(const std::string& command_line) {
  LaunchImport out;
  if (!detail::begin_import(out, LaunchFormat::kMegatron, command_line, "megatron_args")) return out;
  std::vector<std::string> words;
  if (!shell_words(command_line, words)) {
    out.issues.push_back({IssueCode::kMalformedInput, Severity::kError, "megatron_args",
                          "the command line has an unterminated quote (truncated?)."});
    return out;
  }
  FieldWriter w(out);
  ParsedArgs args;
  parse_words(words, args, w);
  if (args.values.empty()) {
    w.error(IssueCode::kMalformedInput, "megatron_args", "no pretrain_gpt.py flags found (paste the --flags).");
    return out;
  }
  const MegatronReader reader(args, w);
  read_model(reader, w);
  out.layout_layers = read_layout(reader, w, out);
  read_training(reader, w, out);
  if (args.lists.count("--recompute-modules") && out.fields.value("recompute", "") == enum_key(Recompute::kSelective)) {
    for (const std::string& module : args.lists.at("--recompute-modules"))
      if (module != "core_attn")
        w.warn(IssueCode::kUnsupportedSetting, "--recompute-modules",
               "recompute module " + quote_text(module) + " is not modelled: selective counts the attention core only.");
  }
  read_world_size(args, w);
  // Every dimension a custom model needs is written: the run is this architecture, not a preset's
  // variant (a review pasted a 70B command line over the 8B preset and saw "llama3.1-8b+custom"), as
  // a config.json import names it.
  bool whole_architecture = true;
  for (const ConfigField& field : config_fields())
    if (field.required_without_preset) whole_architecture &= out.fields.contains(field.key);
  if (whole_architecture) out.fields["model"] = "custom";
  return out;
}

// [SECTION] Export

namespace detail {

// Not a hot path (once per export): the flags in pretrain_gpt.py's argument groups, in order.
LaunchExport export_megatron(const Config& c) {
  LaunchExport out = begin_export(LaunchFormat::kMegatron, c, Framework::kMegatron,
                                  "these flags run the same layout under Megatron-LM, whose memory differs.");
  const auto warn = [&out](const std::string& field, const std::string& message) { warn_unsupported(out, field, message); };
  std::vector<std::string>& a = out.args;
  const auto flag = [&](const char* name) { a.emplace_back(name); };
  const auto value = [&](const char* name, int64_t number) {
    a.emplace_back(name);
    a.push_back(std::to_string(number));
  };
  const auto word = [&](const char* name, const std::string& text) {
    a.emplace_back(name);
    a.push_back(text);
  };
  const ModelSpec& m = c.model;
  const TrainingSpec& t = c.training;
  // A split that Megatron-LM would refuse (a config for torchtitan, DeepSpeed or nanotron, which cut
  // uneven stages themselves): write the split Megatron can run, the one the search would choose, and
  // say so; stages then hold different layers than in the config's framework.
  Layout l = c.layout;
  const FrameworkProfile& megatron = framework_profile(Framework::kMegatron);
  if (pipeline_problem(m.layers, l, megatron) && l.pp_first_stage_layers == 0 && l.pp_last_stage_layers == 0 &&
      choose_pipeline_split(m.layers, megatron, l) && (l.pp_first_stage_layers > 0 || l.pp_last_stage_layers > 0))
    warn("pp", std::to_string(m.layers) + " layers do not split evenly over pp=" + std::to_string(l.pp) + " x vpp=" +
                   std::to_string(l.vpp) + "; " + to_string(t.framework) +
                   " cuts its own uneven stages, Megatron-LM needs them given: first stage " +
                   std::to_string(l.pp_first_stage_layers) + ", last stage " + std::to_string(l.pp_last_stage_layers) +
                   " layers written (memory per stage differs from the config's split).");

  // Launcher: the world size is torchrun's, not pretrain_gpt.py's.
  const int64_t per_node = c.cluster.gpus >= c.cluster.gpus_per_node ? c.cluster.gpus_per_node : c.cluster.gpus;
  if (c.cluster.gpus % per_node != 0) warn("gpus", "gpus is not a multiple of gpus_per_node; torchrun needs equal nodes.");
  a = {"torchrun", "--nnodes", std::to_string(c.cluster.gpus / per_node), "--nproc-per-node", std::to_string(per_node),
       "pretrain_gpt.py"};
  // Model.
  value("--num-layers", m.layers);
  value("--hidden-size", m.hidden);
  value("--ffn-hidden-size", m.ffn);
  value("--num-attention-heads", m.heads);
  if (m.kv_heads != m.heads) {
    flag("--group-query-attention");
    value("--num-query-groups", m.kv_heads);
  }
  if (m.head_dim > 0) value("--kv-channels", m.head_dim);  // the head dimension (arguments.py kv_channels)
  value("--seq-length", t.seq);
  value("--max-position-embeddings", t.seq);
  word("--position-embedding-type", "rope");
  value("--vocab-size", m.vocab);
  word("--normalization", m.norm == NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm");
  if (m.mlp == MlpKind::kSwiGlu) flag("--swiglu");
  if (!m.tied_embeddings) flag("--untie-embeddings-and-output-weights");
  if (m.qk_norm) flag("--qk-layernorm");
  if (!m.linear_bias) flag("--disable-bias-linear");
  if (!m.dropout) {
    word("--attention-dropout", "0");
    word("--hidden-dropout", "0");
  }
  // Layout.
  value("--tensor-model-parallel-size", l.tp);
  value("--pipeline-model-parallel-size", l.pp);
  if (l.cp > 1) value("--context-parallel-size", l.cp);
  const int64_t chunks = l.pp * l.vpp;
  const bool uneven = l.pp_first_stage_layers > 0 || l.pp_last_stage_layers > 0;
  const int64_t rest_chunks = chunks - (l.pp_first_stage_layers > 0) - (l.pp_last_stage_layers > 0);
  const int64_t middle = uneven && rest_chunks > 0 ? (m.layers - l.pp_first_stage_layers - l.pp_last_stage_layers) / rest_chunks
                                                   : m.layers / chunks;
  // Megatron's --account-for-*-in-pipeline-split: the first / last chunk holds one layer fewer.
  const bool embedding_split = uneven && l.pp_first_stage_layers == middle - 1;
  const bool loss_split = uneven && l.pp_last_stage_layers == middle - 1;
  const bool accounted = uneven && (l.pp_first_stage_layers == 0 || embedding_split) &&
                         (l.pp_last_stage_layers == 0 || loss_split);
  if (accounted) {
    if (embedding_split) flag("--account-for-embedding-in-pipeline-split");
    if (loss_split) flag("--account-for-loss-in-pipeline-split");
  } else if (uneven && l.vpp == 1) {
    if (l.pp_first_stage_layers > 0) value("--decoder-first-pipeline-num-layers", l.pp_first_stage_layers);
    if (l.pp_last_stage_layers > 0) value("--decoder-last-pipeline-num-layers", l.pp_last_stage_layers);
  } else if (uneven) {
    // --decoder-first/last-pipeline-num-layers give a rank's layers, which Megatron divides evenly over
    // its vpp chunks (transformer_block.py get_num_layers_to_build); the chunks themselves are set by
    // --pipeline-model-parallel-layout, stages in model order (FRAMEWORK_NOTES §2.6).
    const int64_t first = l.pp_first_stage_layers > 0 ? l.pp_first_stage_layers : middle;
    const int64_t last = l.pp_last_stage_layers > 0 ? l.pp_last_stage_layers : middle;
    std::string layout = "Et*" + std::to_string(first);
    for (int64_t k = 1; k + 1 < chunks; ++k) layout += "|t*" + std::to_string(middle);
    layout += "|t*" + std::to_string(last) + "L";
    word("--pipeline-model-parallel-layout", layout);
    warn("pp_first_stage_layers", "--pipeline-model-parallel-layout sets the uneven chunks: a Megatron-LM without the flag "
                                  "refuses the command line; --decoder-first/last-pipeline-num-layers cannot size one chunk of a rank.");
  }
  const bool layout_flag = uneven && !accounted && l.vpp > 1;
  if (l.vpp > 1 && !layout_flag) value("--num-layers-per-virtual-pipeline-stage", middle);  // layers per virtual stage, as arguments.py wants
  if (t.sp && l.tp > 1) flag("--sequence-parallel");
  if (l.zero >= 1) flag("--use-distributed-optimizer");
  if (l.zero >= 1 && l.dp_replicate > 1) value("--num-distributed-optimizer-instances", l.dp_replicate);
  if (dp_comm_overlapped(t, l.zero)) {  // auto is on for Megatron (memory_model.h): say it on the command line
    flag("--overlap-grad-reduce");
    if (l.zero >= 1) flag("--overlap-param-gather");
  }
  if (t.tp_comm_overlap && l.tp > 1) flag("--tp-comm-overlap");
  if (l.zero >= 2)
    warn("zero", "ZeRO-" + std::to_string(l.zero) + " has no Megatron-LM flag here; --use-distributed-optimizer shards the optimizer only.");
  // Training.
  value("--micro-batch-size", t.micro_batch);
  value("--global-batch-size", t.global_batch);
  if (t.recompute != Recompute::kNone) word("--recompute-granularity", enum_key(t.recompute));
  if (t.recompute == Recompute::kFull) {
    // Every layer: uniform groups of one; the first N of each chunk: block N (transformer_block.py).
    word("--recompute-method", t.recompute_layers > 0 ? "block" : "uniform");
    value("--recompute-num-layers", t.recompute_layers > 0 ? t.recompute_layers : 1);
  }
  flag(half_precision_is_fp16(c.gpu.family) ? "--fp16" : "--bf16");  // Turing and Volta have no bf16
  if (t.precision == Precision::kFp8) word("--fp8-format", "hybrid");
  if (t.precision == Precision::kFp8 && t.fp8_all_gather) flag("--fp8-param-gather");
  if (t.optimizer == Optimizer::kSgd) word("--optimizer", "sgd");
  if (t.optimizer == Optimizer::kAdam8bit) warn("optimizer", "Megatron-LM has no 8-bit Adam; the flags keep its default Adam.");
  if (!t.fp32_grad_buffer) flag("--grad-reduce-in-bf16");
  // The hybrid device optimizer runs on the precision-aware optimizer's code path (its dtype flags
  // left at their fp32 defaults: the same bytes).
  if (t.offload == Offload::kOptimizer) {
    flag("--optimizer-cpu-offload");
    flag("--use-precision-aware-optimizer");
  } else if (t.offload == Offload::kParams) {
    warn("offload", "Megatron-LM has no parameter offload; the flags keep the parameters on the GPU.");
  }
  word("--attention-backend", t.flash ? "flash" : "unfused");
  out.issues.push_back({IssueCode::kUnsupportedSetting, Severity::kWarning, "vocab",
                        "Megatron-LM takes the vocabulary from the tokenizer (--tokenizer-type, --tokenizer-model); "
                        "--vocab-size is read by the NullTokenizer. Add your data, tokenizer, optimizer and RoPE (--rotary-base) flags."});
  // The command to paste: words quoted for sh, flags with their values on one line each.
  std::string text;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool new_line = i > 0 && a[i].rfind("--", 0) == 0 && (i >= 6);
    if (i > 0) text += new_line || a[i] == "pretrain_gpt.py" ? " \\\n  " : " ";
    text += shell_quote(a[i]);
  }
  out.text = text + "\n";
  return out;
}

}  // namespace detail

}  // namespace meshfit
