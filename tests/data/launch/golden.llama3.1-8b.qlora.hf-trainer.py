# meshfit: llama3.1-8b, QLoRA (NF4 base) on 1 x A100 SXM 80GB (transformers TrainingArguments, peft LoraConfig).
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, TrainingArguments
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

bnb_config = BitsAndBytesConfig(
    load_in_4bit=True,
    bnb_4bit_quant_type="nf4",
    bnb_4bit_use_double_quant=True,
    bnb_4bit_compute_dtype=torch.bfloat16,
    bnb_4bit_quant_storage=torch.bfloat16,
)
model = AutoModelForCausalLM.from_pretrained(
    pretrained_model_name_or_path="MODEL_ID_OR_PATH",
    torch_dtype=torch.bfloat16,
    quantization_config=bnb_config,
)
model = prepare_model_for_kbit_training(
    model=model,
    use_gradient_checkpointing=True,
)
lora_config = LoraConfig(
    r=16,
    lora_alpha=32,
    lora_dropout=0.0,
    target_modules="all-linear",
    task_type="CAUSAL_LM",
)
model = get_peft_model(
    model=model,
    peft_config=lora_config,
    autocast_adapter_dtype=True,
)
training_args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=2,
    gradient_accumulation_steps=4,
    bf16=True,
    gradient_checkpointing=True,
    optim="adamw_torch",
    gradient_checkpointing_kwargs={"use_reentrant": False},
)
# Sequences of 4096 tokens: pad or pack to this in your collator (TRL SFTConfig max_length).
